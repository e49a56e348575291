//! With `WGPU_ADAPTER_NAME` naming no adapter, `Gpu::new` fails with
//! `NoAdapter` and says how to set a driver up. Alone in its binary: the
//! environment variable must not reach other tests.

use vyre_graph::{BackendError, Gpu};

#[test]
fn unmatched_adapter_name_is_no_adapter_with_driver_advice() {
    const WANTED: &str = "no-such-adapter-vyre";
    // SAFETY: this binary has this one test and it sets the variable before
    // anything else runs, so no other thread reads or writes the
    // environment concurrently.
    unsafe { std::env::set_var("WGPU_ADAPTER_NAME", WANTED) };
    let err = Gpu::new().expect_err("no adapter is called no-such-adapter-vyre");
    assert!(
        matches!(&err, BackendError::NoAdapter { reason } if reason.contains(WANTED)),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(message.contains("mesa-vulkan-drivers"), "{message}");
    assert!(message.contains("WGPU_ADAPTER_NAME"), "{message}");
}
