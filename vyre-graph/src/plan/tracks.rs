//! [`Tracks`]: how a trace shows a program's dispatches, worked out once per
//! graph: each dispatch's name, the track it is drawn on (one per node as
//! written: a loop's iterations of one node share a track), and what a
//! trace says about it (a fused group's members, a loop iteration, the
//! control dispatches timed with it). `RunReport::write_trace` reads it.

use super::dispatch::Dispatch;
use super::steps::Steps;
use crate::spec::GraphSpec;

/// One dispatch as a trace shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DispatchTrack {
    /// The event's name: the node's label, or the fused group's.
    pub(crate) name: String,
    /// Index into [`Tracks::tracks`].
    pub(crate) track: usize,
    /// Names of a fused group's member nodes (empty for a node).
    pub(crate) members: Vec<String>,
    /// The loop (its index and label) and iteration the dispatch belongs
    /// to.
    pub(crate) iteration: Option<(usize, String, usize)>,
    /// Control dispatches recorded before it (timed with it).
    pub(crate) control: usize,
}

/// The tracks of a program's trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Tracks {
    /// The graph's name.
    pub(crate) graph: String,
    /// Each track's name, in first-use order.
    pub(crate) tracks: Vec<String>,
    /// Each dispatch in recording order.
    pub(crate) dispatches: Vec<DispatchTrack>,
}

impl Tracks {
    /// The tracks of `spec`'s `dispatches`.
    pub(crate) fn new(spec: &GraphSpec, dispatches: &[Dispatch], steps: &Steps) -> Self {
        let mut tracks: Vec<String> = Vec::new();
        let mut track_of = |name: String| match tracks.iter().position(|t| *t == name) {
            Some(t) => t,
            None => {
                tracks.push(name);
                tracks.len() - 1
            }
        };
        let label = |n: usize| spec.nodes.get(n).map_or("?", |n| &*n.label).to_string();
        let out = dispatches
            .iter()
            .enumerate()
            .map(|(d, dispatch)| {
                let control = steps.before.get(d).map_or(0, ExactSizeIterator::len);
                match *dispatch {
                    Dispatch::Node(n) => {
                        let iteration = loop_position(spec, n);
                        // A loop's node is drawn on the track of the same
                        // node of the loop's first iteration.
                        let first = iteration.map_or(n, |(l, _, j)| {
                            spec.loops[l]
                                .iterations
                                .first()
                                .map_or(n, |f| f.first_node + j)
                        });
                        DispatchTrack {
                            name: label(n),
                            track: track_of(format!("node {first}: {}", label(first))),
                            members: Vec::new(),
                            iteration: iteration
                                .map(|(l, i, _)| (l, spec.loops[l].label.to_string(), i)),
                            control,
                        }
                    }
                    Dispatch::Fused(g) => {
                        let group = &spec.fused[g];
                        let name = group.dispatch.label.to_string();
                        DispatchTrack {
                            track: track_of(format!("fused: {name}")),
                            name,
                            members: group.nodes.iter().map(|&n| label(n)).collect(),
                            iteration: None,
                            control,
                        }
                    }
                }
            })
            .collect();
        Tracks {
            graph: spec.name.to_string(),
            tracks,
            dispatches: out,
        }
    }
}

/// The loop, iteration and position in the iteration of node `n`.
fn loop_position(spec: &GraphSpec, n: usize) -> Option<(usize, usize, usize)> {
    spec.loops.iter().enumerate().find_map(|(l, lp)| {
        let i = lp.iteration_of(n)?;
        Some((l, i, n - lp.iterations[i].first_node))
    })
}
