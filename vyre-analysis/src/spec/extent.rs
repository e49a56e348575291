//! [`Extent`]: a size as a function of the problem size `n`.

/// Element count of a buffer, or invocation count of a node, as a function of
/// the problem size `n`: `ceil(n * mul / div) + add`.
///
/// ```
/// use vyre_analysis::spec::Extent;
/// assert_eq!(Extent::N.eval(10), 10);
/// assert_eq!(Extent::constant(4).eval(10), 4);
/// assert_eq!(Extent::scaled(3, 256, 1).eval(1000), 13); // ceil(3000/256)+1
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Extent {
    /// Multiplier of `n` (0 for a constant).
    pub mul: u64,
    /// Divisor of `n * mul`, rounding up (never 0).
    pub div: u64,
    /// Constant added.
    pub add: u64,
}

impl Extent {
    /// Exactly `n`.
    pub const N: Extent = Extent {
        mul: 1,
        div: 1,
        add: 0,
    };

    /// A size that does not depend on `n`.
    #[must_use]
    pub const fn constant(value: u64) -> Self {
        Extent {
            mul: 0,
            div: 1,
            add: value,
        }
    }

    /// `ceil(n * mul / div) + add`. A `div` of 0 is read as 1.
    #[must_use]
    pub const fn scaled(mul: u64, div: u64, add: u64) -> Self {
        Extent {
            mul,
            div: if div == 0 { 1 } else { div },
            add,
        }
    }

    /// Evaluate for problem size `n`, saturating instead of overflowing.
    #[must_use]
    pub const fn eval(&self, n: u64) -> u64 {
        let div = if self.div == 0 { 1 } else { self.div };
        let scaled = (n as u128) * (self.mul as u128);
        let q = scaled.div_ceil(div as u128);
        let v = q + self.add as u128;
        if v > u64::MAX as u128 {
            u64::MAX
        } else {
            v as u64
        }
    }

    /// Whether the value depends on `n`.
    #[must_use]
    pub const fn depends_on_n(&self) -> bool {
        self.mul != 0
    }

    /// The largest `n` with `eval(n) == len`, when one exists and this extent
    /// is exactly `n * mul` (no division, no constant): how a run infers its
    /// problem size from an input's length.
    #[must_use]
    pub const fn solve(&self, len: u64) -> Option<u64> {
        if !self.solvable() || !len.is_multiple_of(self.mul) {
            return None;
        }
        Some(len / self.mul)
    }

    /// Whether a run can infer `n` from a length of this extent (it is
    /// exactly `n * mul`: see [`Extent::solve`]).
    ///
    /// ```
    /// use vyre_analysis::spec::Extent;
    /// assert!(Extent::scaled(4, 1, 0).solvable());
    /// assert!(!Extent::scaled(1, 2, 0).solvable());
    /// assert!(!Extent::constant(8).solvable());
    /// ```
    #[must_use]
    pub const fn solvable(&self) -> bool {
        self.mul != 0 && self.div == 1 && self.add == 0
    }
}

impl std::fmt::Display for Extent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.mul, self.div, self.add) {
            (0, _, a) => write!(f, "{a}"),
            (m, d, a) => {
                if m == 1 {
                    write!(f, "n")?;
                } else {
                    write!(f, "{m}*n")?;
                }
                if d != 1 {
                    write!(f, "/{d}")?;
                }
                if a != 0 {
                    write!(f, "+{a}")?;
                }
                Ok(())
            }
        }
    }
}
