//! The control steps of a data-dependent graph, worked out once from its
//! spec when the graph is built (`indirect.rs` records them): before each
//! dispatch, a loop iteration's gate, the count resets its appends need,
//! and the step that writes its indirect arguments. Which steps report an
//! error after the run is decided here too.
//!
//! The steps before a dispatch are then packed into control dispatches
//! ([`Group`]): one invocation runs a group's steps in order from a table
//! in its control block, so an iteration of a loop costs one control
//! dispatch and its node, not one dispatch per step. A later node's steps
//! join its iteration's first control dispatch when no dispatch in between
//! writes (for a reset: uses) their buffer. A group binds at most
//! [`SLOTS`] graph buffers; a step list needing more is split.

use std::ops::Range;

use crate::program::Dispatch;
use crate::spec::{DispatchSize, GraphSpec, GridFold, Until};

/// Control-kernel modes (word 0 of a step's entry; see `indirect::BODY`).
pub(crate) const COUNT: u32 = 0;
pub(crate) const RESET: u32 = 2;
pub(crate) const GATE_EMPTY: u32 = 3;
pub(crate) const GATE_ZERO: u32 = 4;
pub(crate) const GRID: u32 = 5;

/// Words of a control block's header (`[steps, limit, 0, 0]`).
pub(crate) const HEAD_WORDS: usize = 4;
/// Words of one step's entry in a control block's table.
pub(crate) const ENTRY_WORDS: usize = 16;
/// Word of an entry where a step writes indirect arguments (x, y, z).
pub(crate) const ARGS_WORD: usize = 12;
/// Graph buffers one control dispatch binds (with its control block and
/// the loop states: 8 storage buffers, WebGPU's default limit).
pub(crate) const SLOTS: usize = 6;
/// "No loop" / "no error flag" in a control block.
pub(crate) const NONE: u32 = u32::MAX;

/// One control dispatch: its steps, and the graph buffers it binds.
#[derive(Clone, Debug, Default)]
pub(crate) struct Group {
    /// Its steps, in the order they run.
    pub(crate) steps: Vec<usize>,
    /// Graph buffers bound as `s0..`, each once.
    pub(crate) srcs: Vec<usize>,
    /// Words of its control block: header, table, then the gates' fixed
    /// arguments (8 words per host-sized node).
    pub(crate) words: usize,
}

/// One control step.
#[derive(Clone, Debug, Default)]
pub(crate) struct Step {
    pub(crate) mode: u32,
    /// The graph buffer it reads or resets (every step has one; a step
    /// without one would read slot 0).
    pub(crate) src: Option<usize>,
    /// Its loop.
    pub(crate) lp: Option<usize>,
    /// The dispatch it serves.
    pub(crate) dispatch: usize,
    /// Iteration index within its loop.
    pub(crate) iteration: u32,
    /// A gate's host-sized dispatches, whose arguments it writes.
    pub(crate) fixed: Vec<usize>,
    /// Its control dispatch, its entry's first word in that group's
    /// control block, and its `src`'s slot there (set by `pack`).
    pub(crate) group: usize,
    pub(crate) entry: usize,
    pub(crate) slot: u32,
    /// A gate's first word of fixed arguments in its control block.
    pub(crate) fixed_at: usize,
}

/// The steps of a program, worked out once from its spec.
#[derive(Debug, Default)]
pub(crate) struct Steps {
    pub(crate) steps: Vec<Step>,
    /// Control dispatches, in recording order.
    pub(crate) groups: Vec<Group>,
    /// Control dispatches recorded before each dispatch.
    pub(crate) before: Vec<Range<usize>>,
    /// The control dispatch whose block holds each dispatch's indirect
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
    // Where each dispatch's arguments are written: by a step, or by a
    // gate as its j-th host-sized node.
    let mut at: Vec<Option<(usize, Option<usize>)>> = vec![None; dispatches.len()];
    // Whether some node read each buffer since its last append.
    let mut read_since = vec![false; spec.buffers.len()];
    // The steps recorded before each dispatch, the buffers each dispatch
    // binds or is sized by, and those it writes.
    let mut lists: Vec<Vec<usize>> = vec![Vec::new(); dispatches.len()];
    let mut touches: Vec<Vec<usize>> = vec![Vec::new(); dispatches.len()];
    let mut writes: Vec<Vec<usize>> = vec![Vec::new(); dispatches.len()];
    for (d, dispatch) in dispatches.iter().enumerate() {
        let (node, lp) = match *dispatch {
            Dispatch::Node(n) => (spec.nodes.get(n), loop_of(spec, n).map(|l| (n, l))),
            Dispatch::Fused(g) => (spec.fused.get(g).map(|g| &g.dispatch), None),
        };
        let Some(node) = node else {
            continue;
        };
        // A step of a later node of a loop iteration joins the iteration's
        // first control dispatch when no dispatch in between writes its
        // buffer (a reset: touches it at all): one control dispatch per
        // iteration where possible.
        let first = lp.and_then(|(_, (l, i))| {
            let it = spec.loops[l].iterations[i];
            node_dispatch.get(it.first_node).copied().flatten()
        });
        let home = |src: usize, by: &[Vec<usize>]| match first {
            Some(d0) if d0 <= d && (d0..d).all(|e| !by[e].contains(&src)) => d0,
            _ => d,
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
                    at[f] = Some((gate, Some(j)));
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
                    ..Step::default()
                });
                lists[d].push(gate);
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
                    ..Step::default()
                });
                lists[home(u.buffer, &touches)].push(out.steps.len() - 1);
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
                ..Step::default()
            });
            if let Some(b) = src {
                lists[home(b, &writes)].push(out.steps.len() - 1);
            }
            if reports {
                out.reporting.push(out.steps.len() - 1);
            }
            at[d] = Some((out.steps.len() - 1, None));
        }
        for u in &uses {
            if !u.access.writes() {
                read_since[u.buffer] = true;
            }
        }
        if let Some(b) = node.size.device_source() {
            read_since[b] = true;
        }
        touches[d] = uses.iter().map(|u| u.buffer).collect();
        writes[d] = uses
            .iter()
            .filter(|u| u.access.writes())
            .map(|u| u.buffer)
            .collect();
        touches[d].extend(node.size.device_source());
    }
    pack(&mut out, &lists);
    out.args = at
        .iter()
        .map(|a| {
            a.map(|(s, j)| {
                let step = &out.steps[s];
                let word = match j {
                    Some(j) => step.fixed_at + 8 * j,
                    None => step.entry + ARGS_WORD,
                };
                (step.group, (word * 4) as u64)
            })
        })
        .collect();
    out
}

/// Packs the steps before each dispatch (`lists`) into control dispatches
/// (a new one when a step's buffer would be the group's `SLOTS + 1`-th),
/// lays out their control blocks, and sets `before`.
fn pack(out: &mut Steps, lists: &[Vec<usize>]) {
    let mut before = Vec::with_capacity(lists.len());
    for list in lists {
        let first = out.groups.len();
        for &s in list {
            let src = out.steps[s].src;
            let fits = out.groups[first..]
                .last()
                .is_some_and(|g| src.is_none_or(|b| g.srcs.contains(&b) || g.srcs.len() < SLOTS));
            if !fits {
                out.groups.push(Group::default());
            }
            let g = out.groups.len() - 1;
            let group = &mut out.groups[g];
            group.steps.push(s);
            let slot = match src {
                Some(b) => match group.srcs.iter().position(|&x| x == b) {
                    Some(k) => k,
                    None => {
                        group.srcs.push(b);
                        group.srcs.len() - 1
                    }
                },
                None => 0,
            };
            let step = &mut out.steps[s];
            step.group = g;
            step.slot = slot as u32;
        }
        before.push(first..out.groups.len());
    }
    out.before = before;
    for group in &mut out.groups {
        let mut fixed_at = HEAD_WORDS + ENTRY_WORDS * group.steps.len();
        for (k, &s) in group.steps.iter().enumerate() {
            let step = &mut out.steps[s];
            step.entry = HEAD_WORDS + ENTRY_WORDS * k;
            step.fixed_at = fixed_at;
            fixed_at += 8 * step.fixed.len();
        }
        group.words = fixed_at;
    }
}
