//! The smoke test: plain wgpu (no vyre) runs one WGSL compute shader through
//! the browser's WebGPU and reads the result back. If this fails, the
//! toolchain or the browser is wrong, not vyre.
//!
//! It is also the negative control: run with a browser that has no WebGPU
//! (`WASM_BINDGEN_TEST_WEBDRIVER_JSON=webdriver-no-webgpu.json`), it fails at
//! once with "no adapter" (`.ci/web` checks that it does).
#![cfg(target_arch = "wasm32")]

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};
use wgpu::util::DeviceExt;

wasm_bindgen_test_configure!(run_in_browser);

/// `y[i] = 3 * x[i] + 1`.
const SHADER: &str = "
    @group(0) @binding(0) var<storage, read> x: array<u32>;
    @group(0) @binding(1) var<storage, read_write> y: array<u32>;
    @compute @workgroup_size(64)
    fn main(@builtin(global_invocation_id) g: vec3<u32>) {
        if g.x < arrayLength(&x) { y[g.x] = 3u * x[g.x] + 1u; }
    }";

/// A one-shot slot a `map_async` callback fills and a future awaits.
#[derive(Default)]
struct Slot<T> {
    value: Option<T>,
    waker: Option<Waker>,
}

/// The receiving half of [`oneshot`]. (`Arc<Mutex<..>>` rather than
/// `Rc<RefCell<..>>`: wgpu's callbacks must be `Send` when a crate of the
/// build turns on its `fragile-send-sync-non-atomic-wasm`, as vyre-graph does.)
struct Receiver<T>(Arc<Mutex<Slot<T>>>);

impl<T> Future for Receiver<T> {
    type Output = T;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let mut slot = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match slot.value.take() {
            Some(value) => Poll::Ready(value),
            None => {
                slot.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

fn oneshot<T: Send>() -> (impl FnOnce(T) + Send, Receiver<T>) {
    let slot = Arc::new(Mutex::new(Slot {
        value: None,
        waker: None,
    }));
    let sender = {
        let slot = slot.clone();
        move |value| {
            let waker = {
                let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
                slot.value = Some(value);
                slot.waker.take()
            };
            if let Some(waker) = waker {
                waker.wake();
            }
        }
    };
    (sender, Receiver(slot))
}

/// The browser's WebGPU adapter, or a panic that says there is none.
async fn adapter() -> wgpu::Adapter {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = wgpu::Backends::BROWSER_WEBGPU;
    let instance = wgpu::Instance::new(desc);
    match instance
        .request_adapter(&wgpu::RequestAdapterOptions::default())
        .await
    {
        Ok(adapter) => adapter,
        Err(e) => panic!(
            "no adapter: this browser offers no WebGPU adapter ({e}); \
             Chromium needs --enable-unsafe-webgpu (see vyre-web/webdriver.json)"
        ),
    }
}

#[wasm_bindgen_test]
async fn a_compute_shader_runs_in_the_browser() {
    let adapter = adapter().await;
    let info = adapter.get_info();
    web_sys::console::log_1(&format!("adapter: {} ({:?})", info.name, info.backend).into());
    let (device, queue) = adapter
        .request_device(&wgpu::DeviceDescriptor::default())
        .await
        .expect("a device from the browser's adapter");

    let n = 1000u32;
    let x: Vec<u32> = (0..n).map(|i| i * 7 % 1013).collect();
    let input = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("x"),
        contents: bytemuck::cast_slice(&x),
        usage: wgpu::BufferUsages::STORAGE,
    });
    let bytes = u64::from(n) * 4;
    let output = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("y"),
        size: bytes,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let readback = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback"),
        size: bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("smoke"),
        source: wgpu::ShaderSource::Wgsl(SHADER.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("smoke"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("smoke"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: input.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: output.as_entire_binding(),
            },
        ],
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.dispatch_workgroups(n.div_ceil(64), 1, 1);
    }
    encoder.copy_buffer_to_buffer(&output, 0, &readback, 0, bytes);
    queue.submit([encoder.finish()]);

    let (send, mapped) = oneshot();
    readback.slice(..).map_async(wgpu::MapMode::Read, send);
    mapped.await.expect("the read-back buffer maps");
    let y: Vec<u32> = {
        let view = readback
            .slice(..)
            .get_mapped_range()
            .expect("the mapped range");
        bytemuck::cast_slice(&view).to_vec()
    };
    readback.unmap();

    let expected: Vec<u32> = x.iter().map(|v| 3 * v + 1).collect();
    assert_eq!(y, expected);
}
