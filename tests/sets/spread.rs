//! Batches spread over devices.
