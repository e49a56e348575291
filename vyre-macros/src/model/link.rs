//! What linking a kernel makes (`check/link.rs`): the linked WGSL, the
//! modules it read, and a map from each linked token back to the module
//! and bytes it came from. Plain data (the link runs on a thread of its
//! own).

use std::ops::Range;
use std::path::PathBuf;

/// Where a module's text came from.
#[derive(Clone, Debug, PartialEq)]
pub enum Unit {
    /// The kernel itself.
    Root,
    /// `module NAME = ...;` in the graph: the index among the graph's modules.
    Graph(usize),
    /// A file under the manifest directory.
    File(PathBuf),
}

/// One module that linking read.
#[derive(Clone, Debug)]
pub struct UnitInfo {
    /// Where it came from.
    pub unit: Unit,
    /// Its WESL path (`package::rng`).
    pub path: String,
    /// Its text.
    pub text: String,
    /// The modules that import it, from the kernel down (paths), when known.
    pub chain: Vec<String>,
}

/// A linked kernel: the WGSL naga sees and where each token came from.
#[derive(Clone, Debug)]
pub struct Linked {
    /// The linked WGSL.
    pub text: String,
    /// Every module read (the kernel first).
    pub units: Vec<UnitInfo>,
    /// `(linked range, unit index, original range)`, by linked start.
    pub pieces: Vec<(Range<usize>, usize, Range<usize>)>,
}

impl Linked {
    /// Which module and original byte range the linked bytes `range` come
    /// from: the token holding its start (and its end, when in the same
    /// module). `None` for generated text.
    pub fn unlink(&self, range: Range<usize>) -> Option<(usize, Range<usize>)> {
        let find = |offset: usize| {
            let i = self.pieces.partition_point(|p| p.0.start <= offset);
            self.pieces.get(i.checked_sub(1)?)
        };
        let first = find(range.start)?;
        let last = find(range.end.saturating_sub(1).max(range.start)).filter(|p| p.1 == first.1);
        let end = last.map_or(first.2.end, |p| p.2.end.max(first.2.end));
        Some((first.1, first.2.start..end))
    }
}
