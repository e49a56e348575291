//! The control steps of a data-dependent graph, worked out once from its
//! spec when the graph is built (`indirect.rs` records them): before each
//! dispatch, a loop iteration's gate, the count resets its appends need,
//! and the step that writes its indirect arguments. Which steps report an
//! error after the run is decided here too.

use std::ops::Range;

use crate::program::Dispatch;
use crate::spec::{DispatchSize, GraphSpec, GridFold, Until};

/// Control-kernel modes (`ctl[3]`; see `indirect::SOURCE`).
pub(crate) const COUNT: u32 = 0;
pub(crate) const RESET: u32 = 2;
pub(crate) const GATE_EMPTY: u32 = 3;
pub(crate) const GATE_ZERO: u32 = 4;
pub(crate) const GRID: u32 = 5;

/// Words in a control block (a gate's has 8 more per host-sized node of
/// its iteration).
pub(crate) const CTL_WORDS: usize = 16;

/// One control step.
#[derive(Clone, Debug)]
pub(crate) struct Step {
    pub(crate) mode: u32,
    /// The graph buffer bound as `src` (none: the loop state again).
    pub(crate) src: Option<usize>,
    /// Its loop.
    pub(crate) lp: Option<usize>,
    /// The dispatch it serves.
    pub(crate) dispatch: usize,
    /// Iteration index within its loop.
    pub(crate) iteration: u32,
    /// A gate's host-sized dispatches, whose arguments it writes.
    pub(crate) fixed: Vec<usize>,
}

impl Step {
    pub(crate) fn words(&self) -> usize {
        CTL_WORDS + 8 * self.fixed.len()
    }
}

/// The steps of a program, worked out once from its spec.
#[derive(Debug, Default)]
pub(crate) struct Steps {
    pub(crate) steps: Vec<Step>,
    /// Steps recorded before each dispatch.
    pub(crate) before: Vec<Range<usize>>,
    /// The step whose control block holds each dispatch's indirect
    /// arguments, and their byte offset in it.
    pub(crate) args: Vec<Option<(usize, u64)>>,
    /// Append buffers, in buffer order.
    pub(crate) appends: Vec<usize>,
    /// Steps whose error flag is read back.
    pub(crate) reporting: Vec<usize>,
}

impl Steps {
    /// Whether control steps are recorded before dispatch `d`.
    pub(crate) fn has_steps_before(&self, d: usize) -> bool {
        self.before.get(d).is_some_and(|r| !r.is_empty())
    }

    /// Whether the program needs no control step and no status.
    pub(crate) fn is_empty(&self) -> bool {
        self.steps.is_empty() && self.appends.is_empty()
    }
}

/// The loop and iteration of node `node`, if it is in a loop.
fn loop_of(spec: &GraphSpec, node: usize) -> Option<(usize, usize)> {
    spec.loops
        .iter()
        .enumerate()
        .find_map(|(l, lp)| lp.iteration_of(node).map(|i| (l, i)))
}

/// Works out the control steps of `spec` run as `dispatches`.
pub(crate) fn plan_steps(spec: &GraphSpec, dispatches: &[Dispatch]) -> Steps {
    let appends: Vec<usize> = (0..spec.buffers.len())
        .filter(|&b| spec.buffers[b].append.is_some())
        .collect();
    let mut out = Steps {
        appends,
        args: vec![None; dispatches.len()],
        ..Steps::default()
    };
    let mut node_dispatch = vec![None; spec.nodes.len()];
    for (d, dispatch) in dispatches.iter().enumerate() {
        if let Dispatch::Node(n) = *dispatch
            && let Some(slot) = node_dispatch.get_mut(n)
        {
            *slot = Some(d);
        }
    }
    // Whether some node read each buffer since its last append.
    let mut read_since = vec![false; spec.buffers.len()];
    for (d, dispatch) in dispatches.iter().enumerate() {
        let start = out.steps.len();
        let (node, lp) = match *dispatch {
            Dispatch::Node(n) => (spec.nodes.get(n), loop_of(spec, n).map(|l| (n, l))),
            Dispatch::Fused(g) => (spec.fused.get(g).map(|g| &g.dispatch), None),
        };
        let Some(node) = node else {
            out.before.push(start..start);
            continue;
        };
        // A loop iteration starts with its gate.
        if let Some((n, (l, i))) = lp {
            let lspec = &spec.loops[l];
            let it = lspec.iterations[i];
            if it.first_node == n {
                // Host-sized nodes of the iteration get their arguments
                // from the gate; `over count(..)` nodes from their own step.
                let fixed: Vec<usize> = (it.first_node..it.first_node + it.nodes)
                    .filter(|&m| {
                        spec.nodes
                            .get(m)
                            .is_some_and(|x| x.size.device_source().is_none())
                    })
                    .filter_map(|m| node_dispatch.get(m).copied().flatten())
                    .collect();
                let gate = out.steps.len();
                for (j, &f) in fixed.iter().enumerate() {
                    out.args[f] = Some((gate, ((CTL_WORDS + 8 * j) * 4) as u64));
                }
                out.steps.push(Step {
                    mode: match lspec.until {
                        Until::Empty => GATE_EMPTY,
                        Until::Zero => GATE_ZERO,
                    },
                    src: Some(it.buffer),
                    lp: Some(l),
                    dispatch: d,
                    iteration: i as u32,
                    fixed,
                });
                read_since[it.buffer] = true;
            }
        }
        let uses = crate::program::node_uses(spec, node);
        let loop_index = lp.map(|(_, (l, _))| l);
        for u in &uses {
            if spec.buffers[u.buffer].append.is_some() && u.access.writes() && read_since[u.buffer]
            {
                out.steps.push(Step {
                    mode: RESET,
                    src: Some(u.buffer),
                    lp: loop_index,
                    dispatch: d,
                    iteration: 0,
                    fixed: Vec::new(),
                });
                // An overflow before the reset is reported too.
                out.reporting.push(out.steps.len() - 1);
                read_since[u.buffer] = false;
            }
        }
        let args = match node.size {
            DispatchSize::Count(b) => Some((COUNT, Some(b))),
            DispatchSize::Indirect(b) => Some((GRID, Some(b))),
            _ => None,
        };
        if let Some((mode, src)) = args {
            let xonly = spec
                .kernels
                .get(node.kernel)
                .is_some_and(|k| k.fold == GridFold::XOnly);
            let reports = mode == GRID || (mode == COUNT && xonly);
            out.steps.push(Step {
                mode,
                src,
                lp: loop_index,
                dispatch: d,
                iteration: 0,
                fixed: Vec::new(),
            });
            if reports {
                out.reporting.push(out.steps.len() - 1);
            }
            out.args[d] = Some((out.steps.len() - 1, 0));
        }
        for u in &uses {
            if !u.access.writes() {
                read_since[u.buffer] = true;
            }
        }
        if let Some(b) = node.size.device_source() {
            read_since[b] = true;
        }
        out.before.push(start..out.steps.len());
    }
    out
}
