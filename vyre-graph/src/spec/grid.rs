//! Workgroup grid arithmetic: how many workgroups a problem needs, and how a
//! one-dimensional count of workgroups is folded into a three-dimensional
//! dispatch grid that respects the device's per-dimension limit
//! (`max_compute_workgroups_per_dimension`, 65 535 on most adapters).
//!
//! Everything here is pure integer arithmetic: no function panics, and every
//! grid that cannot be launched is reported as a [`GridError`].
//!
//! ```
//! use vyre_graph::grid::{fold_grid, workgroups_for};
//!
//! // One million invocations, 64 threads per workgroup.
//! let workgroups = workgroups_for(1_000_000, 64);
//! assert_eq!(workgroups, 15_625);
//! assert_eq!(fold_grid(workgroups, 65_535), Ok([15_625, 1, 1]));
//!
//! // Too many workgroups for one dimension: the grid grows into y.
//! assert_eq!(fold_grid(65_536, 65_535), Ok([65_535, 2, 1]));
//! ```

use std::fmt;

/// Why a workgroup grid cannot be launched.
///
/// ```
/// use vyre_graph::grid::{GridError, fold_grid};
///
/// let err = fold_grid(9, 2).unwrap_err();
/// assert_eq!(err, GridError { workgroups: 9, max_per_dimension: 2 });
/// assert_eq!(
///     err.to_string(),
///     "9 workgroups do not fit a grid of at most 2^3; \
///      split the work or raise the workgroup size"
/// );
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GridError {
    /// Total number of workgroups asked for (the product of the grid's
    /// dimensions for an explicit grid, saturating at `u64::MAX`).
    pub workgroups: u64,
    /// The device's limit on each grid dimension.
    pub max_per_dimension: u32,
}

impl fmt::Display for GridError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} workgroups do not fit a grid of at most {}^3; \
             split the work or raise the workgroup size",
            self.workgroups, self.max_per_dimension
        )
    }
}

impl std::error::Error for GridError {}

/// Workgroup count for `invocations` threads with `workgroup_size` threads
/// per workgroup: the ceiling of `invocations / workgroup_size`.
///
/// Zero invocations need zero workgroups. A `workgroup_size` of 0 is treated
/// as 1.
///
/// ```
/// use vyre_graph::grid::workgroups_for;
///
/// assert_eq!(workgroups_for(0, 64), 0);
/// assert_eq!(workgroups_for(64, 64), 1);
/// assert_eq!(workgroups_for(65, 64), 2);
/// assert_eq!(workgroups_for(10, 0), 10);
/// ```
pub fn workgroups_for(invocations: u64, workgroup_size: u32) -> u64 {
    invocations.div_ceil(u64::from(workgroup_size.max(1)))
}

/// Folds a one-dimensional count of workgroups into a three-dimensional grid
/// whose every dimension is at most `max_per_dimension`.
///
/// The scheme is: `x = min(total, max)`; when `total > max`,
/// `y = min(ceil(total / x), max)` and `z = ceil(total / (x * y))`. The
/// returned `[x, y, z]` satisfies `x * y * z >= total_workgroups`, and the
/// overshoot is less than one `x * y` layer. A grid needing `z > max` cannot
/// be launched and is an error, as is a `max_per_dimension` of 0.
///
/// Zero workgroups fold to `[0, 1, 1]`: a grid with a zero dimension
/// dispatches nothing, so callers may skip the dispatch entirely.
///
/// # Kernels launched with a folded grid
///
/// Because the grid may overshoot, and because the linear workgroup index is
/// spread over three dimensions, a kernel launched with a folded grid must
/// recover its linear invocation index from `@builtin(num_workgroups)` and
/// bounds-check it:
///
/// ```wgsl
/// @compute @workgroup_size(64)
/// fn main(@builtin(global_invocation_id) gid: vec3<u32>,
///         @builtin(num_workgroups) nwg: vec3<u32>) {
///     let wg_x = 64u;
///     let i = gid.x + gid.y * (nwg.x * wg_x) + gid.z * (nwg.x * wg_x * nwg.y);
///     if (i >= arrayLength(&data)) { return; }
///     // ...
/// }
/// ```
///
/// # Errors
///
/// [`GridError`] when `max_per_dimension` is 0 or when
/// `total_workgroups > max_per_dimension^3`.
///
/// ```
/// use vyre_graph::grid::fold_grid;
///
/// assert_eq!(fold_grid(10, 65_535), Ok([10, 1, 1]));
/// assert_eq!(fold_grid(65_536, 65_535), Ok([65_535, 2, 1]));
/// assert_eq!(fold_grid(0, 65_535), Ok([0, 1, 1]));
/// assert!(fold_grid(9, 2).is_err());
/// ```
pub fn fold_grid(total_workgroups: u64, max_per_dimension: u32) -> Result<[u32; 3], GridError> {
    let error = GridError {
        workgroups: total_workgroups,
        max_per_dimension,
    };
    if max_per_dimension == 0 {
        return Err(error);
    }
    if total_workgroups == 0 {
        return Ok([0, 1, 1]);
    }
    let max = u64::from(max_per_dimension);
    let x = total_workgroups.min(max);
    if total_workgroups <= max {
        return Ok([narrow(x, error)?, 1, 1]);
    }
    let y = total_workgroups.div_ceil(x).min(max);
    // x, y <= u32::MAX, so x * y < 2^64 and cannot overflow.
    let layer = x.saturating_mul(y);
    let z = total_workgroups.div_ceil(layer);
    if z > max {
        return Err(error);
    }
    Ok([narrow(x, error)?, narrow(y, error)?, narrow(z, error)?])
}

/// Checks an explicit three-dimensional grid against the device limit: every
/// dimension must be at most `max_per_dimension`.
///
/// A grid with a zero dimension is accepted (it dispatches nothing) as long as
/// its other dimensions are within the limit.
///
/// # Errors
///
/// [`GridError`] when any dimension exceeds `max_per_dimension`; the error's
/// `workgroups` is the product of the three dimensions, saturating at
/// `u64::MAX`.
///
/// ```
/// use vyre_graph::grid::check_grid;
///
/// assert_eq!(check_grid([4, 2, 1], 65_535), Ok([4, 2, 1]));
/// let err = check_grid([70_000, 2, 1], 65_535).unwrap_err();
/// assert_eq!(err.workgroups, 140_000);
/// ```
pub fn check_grid(grid: [u64; 3], max_per_dimension: u32) -> Result<[u32; 3], GridError> {
    let error = GridError {
        workgroups: grid[0].saturating_mul(grid[1]).saturating_mul(grid[2]),
        max_per_dimension,
    };
    let max = u64::from(max_per_dimension);
    if grid.iter().any(|&d| d > max) {
        return Err(error);
    }
    Ok([
        narrow(grid[0], error)?,
        narrow(grid[1], error)?,
        narrow(grid[2], error)?,
    ])
}

/// Narrows a dimension already known to be `<= u32::MAX`; reports `error`
/// instead of panicking should that ever not hold.
fn narrow(value: u64, error: GridError) -> Result<u32, GridError> {
    u32::try_from(value).map_err(|_| error)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: u32 = 65_535;
    const MAX64: u64 = 65_535;

    fn product(grid: [u32; 3]) -> u128 {
        grid.iter().map(|&d| u128::from(d)).product()
    }

    #[test]
    fn workgroups_for_is_ceil_division() {
        assert_eq!(workgroups_for(0, 64), 0);
        assert_eq!(workgroups_for(0, 0), 0);
        assert_eq!(workgroups_for(1, 64), 1);
        assert_eq!(workgroups_for(64, 64), 1);
        assert_eq!(workgroups_for(65, 64), 2);
        assert_eq!(workgroups_for(128, 64), 2);
        assert_eq!(workgroups_for(10, 0), 10);
        assert_eq!(workgroups_for(10, 1), 10);
        assert_eq!(workgroups_for(u64::MAX, 1), u64::MAX);
        assert_eq!(workgroups_for(u64::MAX, 2), 1 << 63);
        // 2^64 - 1 = (2^32 - 1)(2^32 + 1), an exact division.
        assert_eq!(workgroups_for(u64::MAX, u32::MAX), (1u64 << 32) + 1);
        assert_eq!(workgroups_for(u64::MAX - 1, u32::MAX), (1u64 << 32) + 1);
        assert_eq!(
            workgroups_for(u64::MAX - u64::from(u32::MAX), u32::MAX),
            1u64 << 32
        );
    }

    #[test]
    fn fold_exact_cases() {
        assert_eq!(fold_grid(0, MAX), Ok([0, 1, 1]));
        assert_eq!(fold_grid(1, MAX), Ok([1, 1, 1]));
        assert_eq!(fold_grid(10, MAX), Ok([10, 1, 1]));
        assert_eq!(fold_grid(MAX64, MAX), Ok([MAX, 1, 1]));
        assert_eq!(fold_grid(MAX64 + 1, MAX), Ok([MAX, 2, 1]));
        assert_eq!(fold_grid(MAX64 * MAX64, MAX), Ok([MAX, MAX, 1]));
        assert_eq!(fold_grid(MAX64 * MAX64 + 1, MAX), Ok([MAX, MAX, 2]));
        assert_eq!(fold_grid(MAX64 * MAX64 * MAX64, MAX), Ok([MAX, MAX, MAX]));
        assert_eq!(
            fold_grid(MAX64 * MAX64 * MAX64 + 1, MAX),
            Err(GridError {
                workgroups: MAX64 * MAX64 * MAX64 + 1,
                max_per_dimension: MAX,
            })
        );
        assert!(fold_grid(u64::MAX, MAX).is_err());
    }

    #[test]
    fn fold_zero_limit_is_an_error() {
        for total in [0, 1, 100] {
            assert_eq!(
                fold_grid(total, 0),
                Err(GridError {
                    workgroups: total,
                    max_per_dimension: 0
                })
            );
        }
    }

    #[test]
    fn fold_extreme_limits_do_not_overflow() {
        let grid = fold_grid(u64::MAX, u32::MAX).expect("u32::MAX^3 > u64::MAX");
        assert!(product(grid) >= u128::from(u64::MAX));
        assert_eq!(grid, [u32::MAX, u32::MAX, 2]);
        assert_eq!(
            fold_grid(u64::MAX, 1).map_err(|e| e.workgroups),
            Err(u64::MAX)
        );
        assert_eq!(fold_grid(1, 1), Ok([1, 1, 1]));
        assert!(fold_grid(2, 1).is_err());
    }

    #[test]
    fn fold_products_cover_the_total() {
        let mut totals = vec![1, 2, 3, MAX64 - 1, MAX64, MAX64 + 1, 2 * MAX64 + 1];
        totals.extend([
            MAX64 * MAX64 - 1,
            MAX64 * MAX64,
            MAX64 * MAX64 + 1,
            123_456_789_012,
            MAX64 * MAX64 * MAX64 - 1,
        ]);
        for total in totals {
            let grid = fold_grid(total, MAX).expect("fits");
            assert!(grid.iter().all(|&d| d <= MAX), "{total}: {grid:?}");
            assert!(product(grid) >= u128::from(total), "{total}: {grid:?}");
        }
    }

    #[test]
    fn fold_property_small_limits() {
        for max in 1u32..=7 {
            let max64 = u64::from(max);
            let capacity = max64 * max64 * max64;
            for total in 0..=capacity + 10 {
                match fold_grid(total, max) {
                    Ok(grid) => {
                        assert!(total <= capacity, "{total} with max {max}: {grid:?}");
                        if total == 0 {
                            assert_eq!(grid, [0, 1, 1]);
                            continue;
                        }
                        assert!(grid.iter().all(|&d| (1..=max).contains(&d)));
                        let [x, y, _] = grid.map(u64::from);
                        let p = product(grid);
                        let total = u128::from(total);
                        assert!(p >= total, "{total} with max {max}: {grid:?}");
                        assert!(
                            p < total + u128::from(x * y),
                            "{total} with max {max}: {grid:?}"
                        );
                        // Higher dimensions are used only when needed.
                        if total <= u128::from(max64) {
                            assert_eq!(grid, [u32::try_from(total).unwrap(), 1, 1]);
                        } else {
                            assert_eq!(grid[0], max);
                        }
                    }
                    Err(e) => {
                        assert!(total > capacity, "{total} with max {max} refused");
                        assert_eq!(
                            e,
                            GridError {
                                workgroups: total,
                                max_per_dimension: max
                            }
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn check_grid_cases() {
        assert_eq!(check_grid([1, 1, 1], MAX), Ok([1, 1, 1]));
        assert_eq!(check_grid([MAX64, MAX64, MAX64], MAX), Ok([MAX, MAX, MAX]));
        assert_eq!(check_grid([0, 5, 5], MAX), Ok([0, 5, 5]));
        assert_eq!(check_grid([0, 0, 0], 0), Ok([0, 0, 0]));
        assert_eq!(
            check_grid([MAX64 + 1, 2, 3], MAX),
            Err(GridError {
                workgroups: (MAX64 + 1) * 6,
                max_per_dimension: MAX
            })
        );
        assert_eq!(
            check_grid([1, 1, MAX64 + 1], MAX).map_err(|e| e.workgroups),
            Err(MAX64 + 1)
        );
        assert_eq!(
            check_grid([u64::MAX, u64::MAX, 1], MAX).map_err(|e| e.workgroups),
            Err(u64::MAX)
        );
        assert!(check_grid([1, 1, 1], 0).is_err());
    }

    #[test]
    fn error_message() {
        let e = GridError {
            workgroups: 10,
            max_per_dimension: 2,
        };
        assert_eq!(
            e.to_string(),
            "10 workgroups do not fit a grid of at most 2^3; \
             split the work or raise the workgroup size"
        );
        let boxed: Box<dyn std::error::Error> = Box::new(e);
        assert!(boxed.source().is_none());
    }
}
