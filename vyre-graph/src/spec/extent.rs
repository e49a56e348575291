//! [`Extent`]: a size as a function of the problem size `n` (defined in
//! `vyre-analysis`, shared with `graph!`).

pub use vyre_analysis::spec::Extent;
