//! A graph inside a wgpu application: the application's device, its
//! buffers, its command encoder (with its own render pass in the same
//! submission), and async runs in flight together.

use crate::common;

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use common::*;
use vyre_graph::spec::{BufferClass, Extent};
use vyre_graph::wgpu;
use vyre_graph::{BackendError, DispatchConfig, Feed, Gpu, GpuBufferHandle, Graph, Sink, graph};

graph! {
    /// Places `n` points on a diagonal of clip space: point `i` at
    /// `(-1 + (2i + 1) / n, same)`, as `vec4<f32>` positions for a vertex
    /// buffer.
    pub struct Diagonal;

    kernel place = wgsl {
        @group(0) @binding(0) var<storage, read_write> pos: array<vec4<f32>>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let n = arrayLength(&pos);
            if g.x >= n { return; }
            let t = -1.0 + (2.0 * f32(g.x) + 1.0) / f32(n);
            pos[g.x] = vec4<f32>(t, t, 0.0, 1.0);
        }
    };

    output pos[n];

    node place(pos: pos) over n;
}

graph! {
    /// `y = x * 3 + 1`.
    pub struct Affine;

    kernel affine = wgsl {
        @group(0) @binding(0) var<storage, read> x: array<u32>;
        @group(0) @binding(1) var<storage, read_write> y: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&x) { y[g.x] = x[g.x] * 3u + 1u; }
        }
    };

    input x[n];
    output y[n];

    node affine(x: x, y: y) over n;
}

graph! {
    /// Sizes that do not depend on a problem size.
    pub struct Fixed;

    kernel fill = wgsl {
        @group(0) @binding(0) var<storage, read_write> y: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&y) { y[g.x] = g.x ^ 0x5au; }
        }
    };

    output y[100];

    node fill(y: y) over 100;
}

/// An application's own device, made with plain wgpu.
fn app_device() -> (wgpu::Adapter, wgpu::Device, wgpu::Queue) {
    pollster::block_on(async {
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = instance
            .request_adapter(&wgpu::RequestAdapterOptions::default())
            .await
            .unwrap_or_else(|e| panic!("no adapter ({e}); {}", vyre_graph::DRIVER_SETUP_HINT));
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor::default())
            .await
            .expect("device");
        (adapter, device, queue)
    })
}

fn affine(x: &[u32]) -> Vec<u32> {
    x.iter()
        .map(|&v| v.wrapping_mul(3).wrapping_add(1))
        .collect()
}

#[test]
fn a_graph_runs_on_the_applications_device() {
    let _serial = serial();
    let (adapter, device, queue) = app_device();
    let gpu = Gpu::from_wgpu(Some(adapter), device.clone(), queue.clone());
    assert!(gpu.device() == &device);
    assert_eq!(gpu.limits(), &device.limits());
    let graph = Affine::new(&gpu).expect("graph");
    let x = data(10_000, 1);
    assert_eq!(graph.run(&x).expect("run").y, affine(&x));
    // Adopted without the adapter, a second Gpu over the same device runs
    // beside the first; handles stay with the Gpu that made them.
    let other = Gpu::from_wgpu(None, device.clone(), queue.clone());
    assert_eq!(other.adapter().name, gpu.adapter().name);
    let graph2 = Affine::new(&other).expect("graph on the second Gpu");
    let handle = GpuBufferHandle::from_slice(&other, &x).expect("handle");
    assert_eq!(graph2.run(&handle).expect("run").y, affine(&x));
    assert_eq!(graph.run(&x).expect("run").y, affine(&x));
    let err = graph.run(&handle).expect_err("another Gpu's handle");
    assert!(
        matches!(&err, BackendError::InvalidHandle { buffer, reason } if buffer == "x" && reason.contains("another Gpu")),
        "{err}"
    );
    let shared = gpu.clone();
    let handle = GpuBufferHandle::from_slice(&shared, &x).expect("handle");
    assert_eq!(graph.run(&handle).expect("a clone's handle").y, affine(&x));
    // A graph that needs no problem size runs too.
    let fixed = Fixed::new(&gpu).expect("graph");
    let want: Vec<u32> = (0..100u32).map(|i| i ^ 0x5a).collect();
    assert_eq!(fixed.run().expect("run").y, want);
}

#[test]
fn application_buffers_as_inputs_and_as_device_sinks() {
    let _serial = serial();
    let (_, device, queue) = app_device();
    let gpu = Gpu::from_wgpu(None, device.clone(), queue.clone());
    let graph = Affine::new(&gpu).expect("graph");
    let n = 4096usize;
    let x = data(n, 5);
    let input = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("app input"),
        size: (n * 4) as u64,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    queue.write_buffer(&input, 0, bytes(&x));
    let output = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("app output"),
        size: (n * 4) as u64,
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_DST
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::VERTEX,
        mapped_at_creation: false,
    });
    let input = GpuBufferHandle::from_wgpu(&gpu, input).expect("import input");
    let output_handle = GpuBufferHandle::from_wgpu(&gpu, output.clone()).expect("import output");
    graph
        .graph()
        .run(
            &DispatchConfig::default(),
            n as u64,
            &[Feed::Device(&input)],
            &mut [Sink::Device(&output_handle)],
        )
        .expect("run into the application's buffer");
    assert_eq!(
        output_handle.read_as::<u32>(&gpu).expect("read"),
        affine(&x)
    );
    // Dropping the handle leaves the application's buffer alone.
    drop(output_handle);
    let again = GpuBufferHandle::from_wgpu(&gpu, output).expect("import again");
    assert_eq!(again.read_as::<u32>(&gpu).expect("read"), affine(&x));
}

#[test]
fn imported_buffers_are_checked() {
    let _serial = serial();
    let (_, device, queue) = app_device();
    let gpu = Gpu::from_wgpu(None, device.clone(), queue);
    let graph = Affine::new(&gpu).expect("graph");
    let make = |size: u64, usage| {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size,
            usage,
            mapped_at_creation: false,
        })
    };
    let reason = |err: BackendError| match err {
        BackendError::InvalidHandle { reason, .. } => reason,
        other => panic!("expected InvalidHandle, got {other:?}"),
    };
    // Not whole words.
    let err = GpuBufferHandle::from_wgpu(&gpu, make(6, wgpu::BufferUsages::STORAGE))
        .expect_err("6 bytes");
    assert!(reason(err).contains("6 bytes"));
    // No usage a graph can use.
    let err = GpuBufferHandle::from_wgpu(&gpu, make(64, wgpu::BufferUsages::UNIFORM))
        .expect_err("uniform only");
    assert!(reason(err).contains("add STORAGE"));
    // Imported fine, but without STORAGE it cannot be bound as an input.
    let copy_only = GpuBufferHandle::from_wgpu(
        &gpu,
        make(
            64,
            wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
        ),
    )
    .expect("import");
    let err = graph.run(&copy_only).expect_err("no STORAGE");
    assert!(reason(err).contains("lacks STORAGE"));
    // As a sink it needs COPY_DST, and the output's size.
    let storage_only =
        GpuBufferHandle::from_wgpu(&gpu, make(64, wgpu::BufferUsages::STORAGE)).expect("import");
    let x = data(16, 1);
    let err = graph
        .graph()
        .run(
            &DispatchConfig::default(),
            16,
            &[Feed::Host(bytes(&x))],
            &mut [Sink::Device(&storage_only)],
        )
        .expect_err("no COPY_DST");
    assert!(reason(err).contains("lacks COPY_DST"));
    let small =
        GpuBufferHandle::from_wgpu(&gpu, make(32, wgpu::BufferUsages::COPY_DST)).expect("import");
    let err = graph
        .graph()
        .run(
            &DispatchConfig::default(),
            16,
            &[Feed::Host(bytes(&x))],
            &mut [Sink::Device(&small)],
        )
        .expect_err("too small");
    assert!(reason(err).contains("holds 32 bytes but 64 are needed"));
    // After every refusal the graph still runs.
    assert_eq!(graph.run(&x).expect("run").y, affine(&x));
}

const SIZE: u32 = 16;

/// Draws one point per vertex (white on black) into a 16×16 RGBA8 texture.
fn point_pipeline(device: &wgpu::Device) -> wgpu::RenderPipeline {
    let shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("points"),
        source: wgpu::ShaderSource::Wgsl(
            "@vertex fn vs(@location(0) p: vec4<f32>) -> @builtin(position) vec4<f32> { return p; }
             @fragment fn fs() -> @location(0) vec4<f32> { return vec4<f32>(1.0); }"
                .into(),
        ),
    });
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some("points"),
        layout: None,
        vertex: wgpu::VertexState {
            module: &shader,
            entry_point: Some("vs"),
            compilation_options: Default::default(),
            buffers: &[Some(wgpu::VertexBufferLayout {
                array_stride: 16,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes: &wgpu::vertex_attr_array![0 => Float32x4],
            })],
        },
        fragment: Some(wgpu::FragmentState {
            module: &shader,
            entry_point: Some("fs"),
            compilation_options: Default::default(),
            targets: &[Some(wgpu::TextureFormat::Rgba8Unorm.into())],
        }),
        primitive: wgpu::PrimitiveState {
            topology: wgpu::PrimitiveTopology::PointList,
            ..Default::default()
        },
        depth_stencil: None,
        multisample: Default::default(),
        multiview_mask: None,
        cache: None,
    })
}

#[test]
fn a_run_recorded_into_the_applications_encoder_feeds_its_render_pass() {
    let _serial = serial();
    let (_, device, queue) = app_device();
    let gpu = Gpu::from_wgpu(None, device.clone(), queue.clone());
    let graph = Diagonal::new(&gpu).expect("graph");
    let config = DispatchConfig::default().with_resident_usage(wgpu::BufferUsages::VERTEX);
    let n = u64::from(SIZE);
    let outputs = graph.resident_outputs(&config, n).expect("outputs");
    let pipeline = point_pipeline(&device);
    let target = device.create_texture(&wgpu::TextureDescriptor {
        label: Some("frame"),
        size: wgpu::Extent3d {
            width: SIZE,
            height: SIZE,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Rgba8Unorm,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    });
    let view = target.create_view(&Default::default());
    let pixels = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("pixels"),
        size: u64::from(256 * SIZE),
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    let mut counters = Vec::new();
    for frame in 0..3 {
        let before = gpu.counters();
        let mut encoder = device.create_command_encoder(&Default::default());
        let recorded = graph
            .record(&mut encoder, &config, &outputs, n)
            .expect("record");
        assert_eq!(recorded.report().submissions, 0);
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("points"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                ..Default::default()
            });
            pass.set_pipeline(&pipeline);
            pass.set_vertex_buffer(0, outputs.pos.buffer().slice(..));
            pass.draw(0..SIZE, 0..1);
        }
        encoder.copy_texture_to_buffer(
            target.as_image_copy(),
            wgpu::TexelCopyBufferInfo {
                buffer: &pixels,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(256),
                    rows_per_image: None,
                },
            },
            target.size(),
        );
        let submission = queue.submit([encoder.finish()]);
        let report = recorded.finish(&submission);
        assert_eq!(report.cache_hit, frame > 0);
        counters.push(gpu.counters().since(&before));
    }
    // Steady state: a recorded run allocates nothing and submits nothing.
    for c in &counters[1..] {
        assert_eq!(
            (c.buffers_created, c.bind_groups_created, c.submissions),
            (0, 0, 0),
            "{c:?}"
        );
    }
    // The points of the diagonal are lit, nothing else.
    pixels
        .slice(..)
        .map_async(wgpu::MapMode::Read, |r| r.expect("map"));
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .expect("poll");
    let data = pixels
        .slice(..)
        .get_mapped_range()
        .expect("mapped")
        .to_vec();
    for y in 0..SIZE {
        for x in 0..SIZE {
            let lit = data[(y * 256 + x * 4) as usize] == 255;
            // Clip-space y grows upwards, texture rows downwards.
            let on_diagonal = x + y == SIZE - 1;
            assert_eq!(lit, on_diagonal, "pixel ({x}, {y})");
        }
    }
}

#[test]
fn a_recorded_run_reads_host_outputs_after_the_callers_submission() {
    let _serial = serial();
    let gpu = gpu();
    let graph = Affine::new(&gpu).expect("graph");
    let x = data(1000, 8);
    let mut y = vec![0u32; 1000];
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    let recorded = graph
        .graph()
        .record(
            &mut encoder,
            &DispatchConfig::default(),
            1000,
            &[Feed::Host(bytes(&x))],
            &[Sink::Host(bytes_mut(&mut y))],
        )
        .expect("record");
    assert!(recorded.reads_back());
    let submission = gpu.queue().submit([encoder.finish()]);
    // Other sinks than the recorded ones are refused.
    let recorded = match recorded.read(submission.clone(), &mut []) {
        Err(BackendError::OutputCountMismatch { .. }) => graph
            .graph()
            .record(
                &mut gpu.device().create_command_encoder(&Default::default()),
                &DispatchConfig::default(),
                1000,
                &[Feed::Host(bytes(&x))],
                &[Sink::Skip],
            )
            .expect("record with a skipped output"),
        other => panic!("expected OutputCountMismatch, got {other:?}"),
    };
    let err = recorded
        .read(submission.clone(), &mut [Sink::Host(bytes_mut(&mut y))])
        .expect_err("nothing was recorded for y");
    assert!(
        matches!(err, BackendError::SinkMismatch { ref buffer } if buffer == "y"),
        "{err}"
    );
    // The whole round trip, read properly.
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    let recorded = graph
        .graph()
        .record(
            &mut encoder,
            &DispatchConfig::default(),
            1000,
            &[Feed::Host(bytes(&x))],
            &[Sink::Host(bytes_mut(&mut y))],
        )
        .expect("record");
    let submission = gpu.queue().submit([encoder.finish()]);
    recorded
        .read(submission, &mut [Sink::Host(bytes_mut(&mut y))])
        .expect("read");
    assert_eq!(y, affine(&x));
    // A recorded run dropped unfinished does not break the graph.
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    let recorded = graph
        .graph()
        .record(
            &mut encoder,
            &DispatchConfig::default(),
            1000,
            &[Feed::Host(bytes(&x))],
            &[Sink::Skip],
        )
        .expect("record");
    drop(recorded);
    gpu.queue().submit([encoder.finish()]);
    assert_eq!(graph.run(&x).expect("run").y, affine(&x));
}

/// A minimal executor: polls every future in turn, parking the thread until
/// one of them is woken.
fn join_all<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut futures: Vec<_> = futures.into_iter().map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    while outputs.iter().any(Option::is_none) {
        for (future, output) in futures.iter_mut().zip(&mut outputs) {
            if output.is_none()
                && let Poll::Ready(value) = future.as_mut().poll(&mut cx)
            {
                *output = Some(value);
            }
        }
        if outputs.iter().any(Option::is_none) {
            std::thread::park_timeout(std::time::Duration::from_millis(50));
        }
    }
    outputs.into_iter().flatten().collect()
}

#[test]
fn two_async_runs_in_flight_on_one_device_are_both_right() {
    let _serial = serial();
    let gpu = gpu();
    let a = Affine::new(&gpu).expect("graph a");
    let b = Graph::new(
        &gpu,
        common::graph_spec(
            "b",
            vec![unary("mul3_add1", MUL3_ADD1)],
            vec![
                buffer("x", BufferClass::Input, 4, Extent::N),
                buffer("y", BufferClass::Output, 4, Extent::N),
            ],
            vec![node("b", 0, &[(0, 0, 0), (0, 1, 1)], OVER_N)],
        ),
    )
    .expect("graph b");
    let xa = data(200_000, 1);
    let xb = data(300_000, 2);
    let config = DispatchConfig::default();
    for _ in 0..3 {
        let mut yb = vec![0u32; xb.len()];
        let run_a = async { a.run_async(&config, &xa).await.map(|o| o.y) };
        let run_b = async {
            b.run_async(
                &config,
                xb.len() as u64,
                &[Feed::Host(bytes(&xb))],
                &mut [Sink::Host(bytes_mut(&mut yb))],
            )
            .await
            .map(|_| Vec::new())
        };
        // Both are polled (and so submitted) before either completes.
        let results = join_all(vec![
            Box::pin(run_a) as std::pin::Pin<Box<dyn Future<Output = _>>>,
            Box::pin(run_b),
        ]);
        let mut results = results.into_iter();
        assert_eq!(results.next().unwrap().expect("a"), affine(&xa));
        results.next().unwrap().expect("b");
        let want: Vec<u32> = xb.iter().map(|&v| mul3_add1(v)).collect();
        assert_same(&yb, &want, "b");
    }
    // Two runs of one graph and one size in flight: two plans.
    let mut y1 = vec![0u32; xb.len()];
    let mut y2 = vec![0u32; xb.len()];
    let x2 = data(xb.len(), 9);
    let (feeds1, feeds2) = ([Feed::Host(bytes(&xb))], [Feed::Host(bytes(&x2))]);
    let mut sinks1 = [Sink::Host(bytes_mut(&mut y1))];
    let mut sinks2 = [Sink::Host(bytes_mut(&mut y2))];
    let run1 = b.run_async(&config, xb.len() as u64, &feeds1, &mut sinks1);
    let run2 = b.run_async(&config, xb.len() as u64, &feeds2, &mut sinks2);
    for r in join_all(vec![run1, run2]) {
        r.expect("run");
    }
    assert_same(
        &y1,
        &xb.iter().map(|&v| mul3_add1(v)).collect::<Vec<_>>(),
        "y1",
    );
    assert_same(
        &y2,
        &x2.iter().map(|&v| mul3_add1(v)).collect::<Vec<_>>(),
        "y2",
    );
    // And with pollster.
    let out = pollster::block_on(a.run_async(&config, &xa)).expect("pollster");
    assert_eq!(out.y, affine(&xa));
}

#[test]
fn a_graph_needing_more_than_the_applications_device_has_is_refused() {
    let _serial = serial();
    // The application opened its device with WebGPU's default limits:
    // 256 invocations per workgroup.
    let (_, device, queue) = app_device();
    assert_eq!(device.limits().max_compute_invocations_per_workgroup, 256);
    let gpu = Gpu::from_wgpu(None, device, queue);
    let wide = "
        @group(0) @binding(0) var<storage, read_write> y: array<u32>;
        @compute @workgroup_size(512)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) { y[g.x] = g.x; }";
    let spec = graph_spec(
        "wide",
        vec![kernel("wide", wide, [512, 1, 1], &[write("y", 0, 0, 4)])],
        vec![buffer("y", BufferClass::Output, 4, Extent::N)],
        vec![node("wide", 0, &[(0, 0, 0)], OVER_N)],
    );
    let before = gpu.counters();
    let err = Graph::new(&gpu, spec).expect_err("too wide for this device");
    assert!(
        matches!(
            &err,
            BackendError::LimitExceeded { kernel, limit: "max_compute_workgroup_size_x", needed: 512, available: 256 }
                if kernel == "wide"
        ),
        "{err}"
    );
    assert_eq!(gpu.counters().since(&before).pipelines_created, 0);
}
