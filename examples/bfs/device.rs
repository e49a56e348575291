//! The breadth-first search as one `graph!` whose loop stops itself.

/// Frontiers the device loop expands at most (`repeat up to 64`).
pub const MAX_LEVELS: u32 = 64;
