//! Input and output value types: buffer classes, accesses, uses, hazards,
//! edges and live ranges.

use core::fmt;

/// What a graph buffer is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BufferClass {
    /// Host data uploaded before the graph runs; nodes may only read it.
    Input,
    /// Host data uploaded before the run that nodes may also write; read back on request.
    InOut,
    /// Written by nodes, read back by the host after the run.
    Output,
    /// Written and read only by nodes; never seen by the host. Only these may share device memory.
    Intermediate,
    /// Host-written uniform parameters; nodes may only read it.
    Uniform,
}

impl BufferClass {
    /// Whether nodes may only read buffers of this class ([`Input`](Self::Input)
    /// and [`Uniform`](Self::Uniform)).
    ///
    /// ```
    /// use vyre_analysis::BufferClass;
    /// assert!(BufferClass::Uniform.is_read_only());
    /// assert!(!BufferClass::InOut.is_read_only());
    /// ```
    #[must_use]
    pub const fn is_read_only(self) -> bool {
        matches!(self, Self::Input | Self::Uniform)
    }

    /// Whether the buffer holds host data before the first node runs
    /// ([`Input`](Self::Input), [`InOut`](Self::InOut) and
    /// [`Uniform`](Self::Uniform)).
    #[must_use]
    pub const fn is_uploaded(self) -> bool {
        matches!(self, Self::Input | Self::InOut | Self::Uniform)
    }

    /// Whether the host may read the buffer back after the last node
    /// ([`InOut`](Self::InOut) and [`Output`](Self::Output)).
    #[must_use]
    pub const fn is_read_back(self) -> bool {
        matches!(self, Self::InOut | Self::Output)
    }
}

/// How a node touches a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// The node only reads the buffer.
    Read,
    /// The node only writes the buffer.
    Write,
    /// The node reads the buffer and then writes it (for example an in-place update).
    ReadWrite,
}

impl Access {
    /// Whether this access reads the buffer ([`Read`](Self::Read) or [`ReadWrite`](Self::ReadWrite)).
    ///
    /// ```
    /// use vyre_analysis::Access;
    /// assert!(Access::ReadWrite.reads());
    /// assert!(!Access::Write.reads());
    /// ```
    #[must_use]
    pub const fn reads(self) -> bool {
        matches!(self, Self::Read | Self::ReadWrite)
    }

    /// Whether this access writes the buffer ([`Write`](Self::Write) or [`ReadWrite`](Self::ReadWrite)).
    ///
    /// ```
    /// use vyre_analysis::Access;
    /// assert!(Access::ReadWrite.writes());
    /// assert!(!Access::Read.writes());
    /// ```
    #[must_use]
    pub const fn writes(self) -> bool {
        matches!(self, Self::Write | Self::ReadWrite)
    }

    /// The access that reads when either reads and writes when either writes.
    ///
    /// ```
    /// use vyre_analysis::Access;
    /// assert_eq!(Access::Read.union(Access::Read), Access::Read);
    /// assert_eq!(Access::Read.union(Access::Write), Access::ReadWrite);
    /// ```
    #[must_use]
    pub const fn union(self, other: Self) -> Self {
        let reads = self.reads() || other.reads();
        let writes = self.writes() || other.writes();
        match (reads, writes) {
            (true, true) => Self::ReadWrite,
            (false, true) => Self::Write,
            // An access always reads or writes, so `(false, false)` cannot occur.
            (_, false) => Self::Read,
        }
    }
}

/// One use of a buffer by a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Use {
    /// Index of the buffer in the `classes` slice given to [`analyse`](crate::analyse).
    pub buffer: usize,
    /// How the node touches the buffer.
    pub access: Access,
}

impl Use {
    /// A use that only reads `buffer`.
    #[must_use]
    pub const fn read(buffer: usize) -> Self {
        Self {
            buffer,
            access: Access::Read,
        }
    }

    /// A use that only writes `buffer`.
    #[must_use]
    pub const fn write(buffer: usize) -> Self {
        Self {
            buffer,
            access: Access::Write,
        }
    }

    /// A use that reads and then writes `buffer`.
    #[must_use]
    pub const fn read_write(buffer: usize) -> Self {
        Self {
            buffer,
            access: Access::ReadWrite,
        }
    }
}

/// Why a later node must wait for an earlier one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Hazard {
    /// The later node reads what the earlier one wrote.
    ReadAfterWrite,
    /// The later node overwrites what the earlier one read.
    WriteAfterRead,
    /// The later node overwrites what the earlier one wrote.
    WriteAfterWrite,
    /// The later node reuses the device memory of a buffer the earlier one touched last.
    Reuse,
}

impl Hazard {
    /// Long name: `"read-after-write"`, `"write-after-read"`,
    /// `"write-after-write"` or `"reuse"` (also what [`Display`](fmt::Display) prints).
    ///
    /// ```
    /// use vyre_analysis::Hazard;
    /// assert_eq!(Hazard::ReadAfterWrite.name(), "read-after-write");
    /// assert_eq!(Hazard::Reuse.to_string(), "reuse");
    /// ```
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::ReadAfterWrite => "read-after-write",
            Self::WriteAfterRead => "write-after-read",
            Self::WriteAfterWrite => "write-after-write",
            Self::Reuse => "reuse",
        }
    }

    /// Short name: `"RAW"`, `"WAR"`, `"WAW"` or `"reuse"`.
    ///
    /// ```
    /// use vyre_analysis::Hazard;
    /// assert_eq!(Hazard::WriteAfterRead.short_name(), "WAR");
    /// ```
    #[must_use]
    pub const fn short_name(self) -> &'static str {
        match self {
            Self::ReadAfterWrite => "RAW",
            Self::WriteAfterRead => "WAR",
            Self::WriteAfterWrite => "WAW",
            Self::Reuse => "reuse",
        }
    }

    /// Position in declaration order, used to sort edges.
    pub(crate) const fn rank(self) -> u8 {
        match self {
            Self::ReadAfterWrite => 0,
            Self::WriteAfterRead => 1,
            Self::WriteAfterWrite => 2,
            Self::Reuse => 3,
        }
    }
}

impl fmt::Display for Hazard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Name of a hazard; the same as [`Hazard::name`].
#[must_use]
pub const fn hazard_name(h: Hazard) -> &'static str {
    h.name()
}

/// A dependency: node `to` must not start before node `from` has finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Edge {
    /// The earlier node (always less than `to`).
    pub from: usize,
    /// The later node.
    pub to: usize,
    /// The buffer that causes the dependency (for [`Hazard::Reuse`], the
    /// buffer that takes over the device memory).
    pub buffer: usize,
    /// Why `to` waits for `from`.
    pub hazard: Hazard,
}

impl Edge {
    /// Sort key: `(to, from, buffer, hazard)`.
    pub(crate) const fn key(&self) -> (usize, usize, usize, u8) {
        (self.to, self.from, self.buffer, self.hazard.rank())
    }
}

/// Inclusive range of node indices (program order) during which a buffer must hold its data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LiveRange {
    /// First node during which the buffer holds data.
    pub first: usize,
    /// Last node during which the buffer holds data (`first <= last`).
    pub last: usize,
}

impl LiveRange {
    /// Whether `node` lies in the range.
    #[must_use]
    pub const fn contains(&self, node: usize) -> bool {
        self.first <= node && node <= self.last
    }

    /// Whether the two ranges share a node.
    ///
    /// ```
    /// use vyre_analysis::LiveRange;
    /// let a = LiveRange { first: 0, last: 1 };
    /// assert!(a.overlaps(&LiveRange { first: 1, last: 3 }));
    /// assert!(!a.overlaps(&LiveRange { first: 2, last: 3 }));
    /// ```
    #[must_use]
    pub const fn overlaps(&self, other: &Self) -> bool {
        self.first <= other.last && other.first <= self.last
    }
}
