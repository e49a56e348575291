//! Resident data in a device set.
