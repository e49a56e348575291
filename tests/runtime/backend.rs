//! The backend wgpu picks honours `WGPU_BACKEND`: CI runs the GPU tests once
//! on Vulkan and once on OpenGL (`--features vyre-graph/gl`), and this test
//! proves each run used the backend it asked for.

use crate::common;

use vyre_graph::wgpu::Backend;

#[test]
fn adapter_uses_the_backend_asked_for() {
    let gpu = common::gpu();
    let backend = gpu.adapter().backend;
    match std::env::var("WGPU_BACKEND").ok().as_deref() {
        Some("gl") | Some("gles") | Some("opengl") => assert_eq!(backend, Backend::Gl),
        Some("vulkan") | Some("vk") => assert_eq!(backend, Backend::Vulkan),
        // Unset: the default order prefers Vulkan here (lavapipe in CI).
        None => assert_eq!(backend, Backend::Vulkan, "{}", gpu.adapter()),
        Some(other) => println!("WGPU_BACKEND={other}: running on {}", gpu.adapter()),
    }
}
