//! The control steps of a data-dependent graph, worked out once from its
//! spec when the graph is built (`control.rs` lays them out for the control kernel, `run/` records them): before each
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
//!
//! Where each loop's iterations are among the dispatches is worked out here
//! too ([`LoopLayout`]), with the loop's [`Exit`]: the control dispatch a
//! submission records after the last iteration it records of a loop it
//! records in part (see `trips.rs`).

use std::ops::Range;

use super::dispatch::Dispatch;
use super::validate::node_uses;
use crate::spec::{DispatchSize, GraphSpec, GridFold, NodeSpec, Until};

/// Control-kernel modes (word 0 of a step's entry; see `control::BODY`).
pub(crate) const COUNT: u32 = 0;
pub(crate) const RESET: u32 = 2;
pub(crate) const GATE_EMPTY: u32 = 3;
pub(crate) const GATE_ZERO: u32 = 4;
pub(crate) const GRID: u32 = 5;
pub(crate) const EXIT: u32 = 6;

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
    /// Each loop's iterations among the dispatches and its exit, in
    /// `spec.loops` order.
    pub(crate) loops: Vec<LoopLayout>,
    /// The loop each dispatch belongs to, if any.
    pub(crate) dispatch_loop: Vec<Option<usize>>,
    /// Whether a run may record loops in part and continue them in a
    /// further submission (`trips.rs`): every loop's iterations are
    /// consecutive dispatches, no loop overlaps another, each loop has an
    /// exit, and every dispatch after the first loop that is not in a loop
    /// is sized on the device (so that a held run can make it launch
    /// nothing). Otherwise every run records every iteration.
    pub(crate) partial: bool,
}

/// Where one loop's iterations are among the dispatches, and its exit.
#[derive(Clone, Debug, Default)]
pub(crate) struct LoopLayout {
    /// `K`: the loop's iterations (from its spec, whatever its layout).
    pub(crate) k: u32,
    /// The first dispatch of each iteration, then the dispatch after the
    /// loop: `K + 1` entries (empty when the graph records loops whole).
    pub(crate) starts: Vec<usize>,
    /// Its exit, when the loop can be recorded in part.
    pub(crate) exit: Option<Exit>,
}

impl LoopLayout {
    /// `K`: the loop's iterations.
    pub(crate) fn k(&self) -> u32 {
        self.k
    }

    /// The dispatch where iteration `i` starts (`i = K`: the dispatch after
    /// the loop).
    pub(crate) fn start(&self, i: u32) -> usize {
        self.starts.get(i as usize).copied().unwrap_or(0)
    }
}

/// The exit of a loop recorded in part: one control dispatch after the last
/// iteration a submission records. Unless the loop stopped, or an earlier
/// loop holds the run, it evaluates the condition of the next iteration
/// (the one its loop state's count of iterations names) as that
/// iteration's gate would: met, the loop stops there; not met, the loop
/// *holds* the run, and every later step and dispatch of the submission
/// does nothing (the host continues the loop in a further submission).
#[derive(Clone, Debug, Default)]
pub(crate) struct Exit {
    /// The graph buffers it binds: the loop's condition buffers, each once.
    pub(crate) srcs: Vec<usize>,
    /// The slot (in `srcs`) of each iteration's condition buffer.
    pub(crate) slots: Vec<u32>,
}

impl Exit {
    /// Word of its control block where the iterations' slots start.
    pub(crate) const TABLE_AT: usize = HEAD_WORDS + ENTRY_WORDS;

    /// Words of its control block.
    pub(crate) fn words(&self) -> usize {
        Self::TABLE_AT + self.slots.len()
    }
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

    /// The word of the loop states that says which loop holds the run
    /// (`loop + 1`; 0: none), after the loops' states and the error words.
    pub(crate) fn hold_word(&self) -> usize {
        2 * self.loops.len() + self.reporting.len()
    }

    /// Words of the loop states: per loop (stopped, iterations), an error
    /// word per reporting step, then the hold word when there are loops.
    pub(crate) fn state_words(&self) -> usize {
        self.hold_word() + usize::from(!self.loops.is_empty())
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
    let mut planner = Planner::new(spec, dispatches);
    for (d, dispatch) in dispatches.iter().enumerate() {
        planner.dispatch(d, *dispatch);
    }
    let node_dispatch = std::mem::take(&mut planner.node_dispatch);
    let mut steps = planner.finish();
    lay_out_loops(spec, &node_dispatch, &mut steps);
    steps
}

/// Where each loop's iterations are among the dispatches, their exits, and
/// whether a run may record loops in part ([`Steps::partial`]).
fn lay_out_loops(spec: &GraphSpec, node_dispatch: &[Option<usize>], out: &mut Steps) {
    let count = out.args.len();
    out.dispatch_loop = vec![None; count];
    let mut partial = !spec.loops.is_empty();
    let mut first_loop = count;
    for (l, lp) in spec.loops.iter().enumerate() {
        let mut starts = Vec::with_capacity(lp.iterations.len() + 1);
        let mut next = None;
        for it in lp.iterations.iter() {
            let first = node_dispatch.get(it.first_node).copied().flatten();
            // Consecutive: each node of the iteration is the next dispatch,
            // and the iteration starts where the one before ended.
            let consecutive = first.is_some_and(|d0| {
                next.is_none_or(|n| n == d0)
                    && (0..it.nodes).all(|j| {
                        node_dispatch.get(it.first_node + j).copied().flatten() == Some(d0 + j)
                    })
            });
            match first {
                Some(d0) if consecutive => {
                    starts.push(d0);
                    next = Some(d0 + it.nodes);
                }
                _ => partial = false,
            }
        }
        let mut layout = LoopLayout {
            k: u32::try_from(lp.iterations.len()).unwrap_or(u32::MAX),
            ..LoopLayout::default()
        };
        if let (Some(end), true) = (next, partial && !starts.is_empty()) {
            starts.push(end);
            let range = starts[0]..end;
            if range.clone().any(|d| out.dispatch_loop[d].is_some()) {
                partial = false;
            }
            for d in range {
                out.dispatch_loop[d] = Some(l);
            }
            first_loop = first_loop.min(starts[0]);
            layout.starts = starts;
            layout.exit = exit(lp);
            partial &= layout.exit.is_some();
        } else {
            partial = false;
        }
        out.loops.push(layout);
    }
    // A held run makes every later dispatch launch nothing: each one
    // outside a loop must take its arguments from a control step.
    partial &= (first_loop..count).all(|d| out.dispatch_loop[d].is_some() || out.args[d].is_some());
    out.partial = partial;
}

/// The exit of loop `lp`: its condition buffers (at most [`SLOTS`], else
/// none: the loop is recorded whole).
fn exit(lp: &crate::spec::LoopSpec) -> Option<Exit> {
    let mut exit = Exit::default();
    for it in lp.iterations.iter() {
        let slot = match exit.srcs.iter().position(|&b| b == it.buffer) {
            Some(k) => k,
            None => {
                exit.srcs.push(it.buffer);
                exit.srcs.len() - 1
            }
        };
        exit.slots.push(slot as u32);
    }
    (exit.srcs.len() <= SLOTS).then_some(exit)
}

/// [`plan_steps`]'s state while it walks the dispatches in order.
struct Planner<'s> {
    spec: &'s GraphSpec,
    out: Steps,
    /// The dispatch of each node (none for a fused group's members).
    node_dispatch: Vec<Option<usize>>,
    /// Where each dispatch's arguments are written: by a step, or by a
    /// gate as its j-th host-sized node.
    at: Vec<Option<(usize, Option<usize>)>>,
    /// Whether some node read each buffer since its last append.
    read_since: Vec<bool>,
    /// The steps recorded before each dispatch.
    lists: Vec<Vec<usize>>,
    /// The buffers each dispatch binds or is sized by.
    touches: Vec<Vec<usize>>,
    /// The buffers each dispatch writes.
    writes: Vec<Vec<usize>>,
}

impl<'s> Planner<'s> {
    fn new(spec: &'s GraphSpec, dispatches: &[Dispatch]) -> Self {
        let appends: Vec<usize> = (0..spec.buffers.len())
            .filter(|&b| spec.buffers[b].append.is_some())
            .collect();
        let mut node_dispatch = vec![None; spec.nodes.len()];
        for (d, dispatch) in dispatches.iter().enumerate() {
            if let Dispatch::Node(n) = *dispatch
                && let Some(slot) = node_dispatch.get_mut(n)
            {
                *slot = Some(d);
            }
        }
        let count = dispatches.len();
        Planner {
            spec,
            out: Steps {
                appends,
                args: vec![None; count],
                ..Steps::default()
            },
            node_dispatch,
            at: vec![None; count],
            read_since: vec![false; spec.buffers.len()],
            lists: vec![Vec::new(); count],
            touches: vec![Vec::new(); count],
            writes: vec![Vec::new(); count],
        }
    }

    /// The steps of dispatch `d`: its loop iteration's gate when it is the
    /// iteration's first node, the count resets of the appends it makes,
    /// and the step that writes its indirect arguments.
    fn dispatch(&mut self, d: usize, dispatch: Dispatch) {
        let spec = self.spec;
        let (node, lp) = match dispatch {
            Dispatch::Node(n) => (spec.nodes.get(n), loop_of(spec, n).map(|l| (n, l))),
            Dispatch::Fused(g) => (spec.fused.get(g).map(|g| &g.dispatch), None),
        };
        let Some(node) = node else {
            return;
        };
        // A step of a later node of a loop iteration joins the iteration's
        // first control dispatch when no dispatch in between writes its
        // buffer (a reset: touches it at all): one control dispatch per
        // iteration where possible.
        let first = lp.and_then(|(_, (l, i))| {
            let it = spec.loops[l].iterations[i];
            self.node_dispatch.get(it.first_node).copied().flatten()
        });
        // A loop iteration starts with its gate.
        if let Some((n, (l, i))) = lp {
            self.gate(d, n, l, i);
        }
        let uses = node_uses(spec, node);
        let loop_index = lp.map(|(_, (l, _))| l);
        for u in &uses {
            if spec.buffers[u.buffer].append.is_some()
                && u.access.writes()
                && self.read_since[u.buffer]
            {
                let home = home(first, d, u.buffer, &self.touches);
                self.push(home, RESET, Some(u.buffer), loop_index, d);
                // An overflow before the reset is reported too.
                self.out.reporting.push(self.out.steps.len() - 1);
                self.read_since[u.buffer] = false;
            }
        }
        self.args(d, node, loop_index, first);
        for u in &uses {
            if !u.access.writes() {
                self.read_since[u.buffer] = true;
            }
        }
        if let Some(b) = node.size.device_source() {
            self.read_since[b] = true;
        }
        self.touches[d] = uses.iter().map(|u| u.buffer).collect();
        self.writes[d] = uses
            .iter()
            .filter(|u| u.access.writes())
            .map(|u| u.buffer)
            .collect();
        self.touches[d].extend(node.size.device_source());
    }

    /// The gate of iteration `i` of loop `l`, before dispatch `d` when it
    /// runs the iteration's first node `n`.
    fn gate(&mut self, d: usize, n: usize, l: usize, i: usize) {
        let spec = self.spec;
        let lspec = &spec.loops[l];
        let it = lspec.iterations[i];
        if it.first_node != n {
            return;
        }
        // Host-sized nodes of the iteration get their arguments from the
        // gate; `over count(..)` nodes from their own step.
        let fixed: Vec<usize> = (it.first_node..it.first_node + it.nodes)
            .filter(|&m| {
                spec.nodes
                    .get(m)
                    .is_some_and(|x| x.size.device_source().is_none())
            })
            .filter_map(|m| self.node_dispatch.get(m).copied().flatten())
            .collect();
        let gate = self.out.steps.len();
        for (j, &f) in fixed.iter().enumerate() {
            self.at[f] = Some((gate, Some(j)));
        }
        self.out.steps.push(Step {
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
        self.lists[d].push(gate);
        self.read_since[it.buffer] = true;
    }

    /// The step that writes dispatch `d`'s indirect arguments, when `node`
    /// is sized on the device.
    fn args(&mut self, d: usize, node: &NodeSpec, lp: Option<usize>, first: Option<usize>) {
        let (mode, b) = match node.size {
            DispatchSize::Count(b) => (COUNT, b),
            DispatchSize::Indirect(b) => (GRID, b),
            _ => return,
        };
        let xonly = self
            .spec
            .kernels
            .get(node.kernel)
            .is_some_and(|k| k.fold == GridFold::XOnly);
        let home = home(first, d, b, &self.writes);
        self.push(home, mode, Some(b), lp, d);
        if mode == GRID || xonly {
            self.out.reporting.push(self.out.steps.len() - 1);
        }
        self.at[d] = Some((self.out.steps.len() - 1, None));
    }

    /// A step of `mode` on `src` serving dispatch `d`, recorded before
    /// dispatch `home`.
    fn push(&mut self, home: usize, mode: u32, src: Option<usize>, lp: Option<usize>, d: usize) {
        self.out.steps.push(Step {
            mode,
            src,
            lp,
            dispatch: d,
            ..Step::default()
        });
        self.lists[home].push(self.out.steps.len() - 1);
    }

    /// Packs the steps into control dispatches and places each dispatch's
    /// indirect arguments.
    fn finish(mut self) -> Steps {
        pack(&mut self.out, &self.lists);
        let out = &self.out;
        let args = self
            .at
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
        self.out.args = args;
        self.out
    }
}

/// The dispatch a step on `src` serving dispatch `d` is recorded before:
/// its loop iteration's first dispatch `first` when no dispatch in between
/// has `src` in `by` (writes it, or for a reset touches it), else `d`.
fn home(first: Option<usize>, d: usize, src: usize, by: &[Vec<usize>]) -> usize {
    match first {
        Some(d0) if d0 <= d && (d0..d).all(|e| !by[e].contains(&src)) => d0,
        _ => d,
    }
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
