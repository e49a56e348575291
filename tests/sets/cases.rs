//! The graphs the device-set tests run, their instances, and the CPU's
//! answers.

use vyre_graph::{Feed, GpuFilter, Gpus, GraphSet, Instance, Sink, graph, wgpu};

mod chain {
    use super::graph;
    graph! {
        /// Two element-wise steps and an accumulator: stackable.
        pub struct Chain;

        kernel step = wgsl {
            @group(0) @binding(0) var<storage, read> src: array<u32>;
            @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                let i = g.x;
                if i < arrayLength(&src) { dst[i] = src[i] * 1664525u + 1013904223u; }
            }
        };
        kernel acc = wgsl {
            @group(0) @binding(0) var<storage, read> a: array<u32>;
            @group(0) @binding(1) var<storage, read_write> z: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&a) { z[g.x] = z[g.x] ^ a[g.x]; }
            }
        };

        input x[n];
        inout z[n];
        intermediate t[n];
        output y[n];

        node first = step(src: x, dst: t) over n;
        node second = step(src: t, dst: y) over n;
        node mix = acc(a: y, z: z) over n;
    }
}
pub use chain::Chain;

// Run untyped here: its typed argument trait goes unused.
#[allow(dead_code)]
mod evens {
    use super::graph;
    graph! {
        /// Keeps the even values of `x`: an append output, not stackable.
        pub struct Evens;

        kernel keep = wgsl {
            struct Hits { count: atomic<u32>, items: array<u32> }
            @group(0) @binding(0) var<storage, read> x: array<u32>;
            @group(0) @binding(1) var<storage, read_write> hits: Hits;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&x) && x[g.x] % 2u == 0u {
                    let slot = atomicAdd(&hits.count, 1u);
                    if slot < arrayLength(&hits.items) { hits.items[slot] = x[g.x]; }
                }
            }
        };

        input x[n];
        append hits[n];

        node keep(x: x, hits: hits) over n;
    }
}
#[allow(unused_imports)]
pub use evens::Evens;

pub fn lcg(x: u32) -> u32 {
    x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223)
}

/// `count` devices of the lavapipe adapter (the Vulkan backend, whatever
/// `WGPU_BACKEND` says). Without it the test fails with the setup step.
pub fn lavapipe(count: usize) -> Gpus {
    let filter = GpuFilter::default()
        .with_backends(wgpu::Backends::VULKAN)
        .with_devices_per_adapter(count);
    match Gpus::open(&filter) {
        Ok(gpus) => gpus,
        Err(e) => panic!("no devices for the device-set tests: {e}"),
    }
}

/// `spec`'s graph on `count` lavapipe devices.
pub fn set_of(count: usize, spec: vyre_graph::spec::GraphSpec) -> GraphSet {
    let gpus = lavapipe(count);
    assert_eq!(gpus.len(), count, "one lavapipe adapter expected");
    GraphSet::new(&gpus, spec).expect("graph set")
}

/// One instance of `Chain`: `x`, `z` in, and the CPU's `(y, z)` out.
pub struct Case {
    pub x: Vec<u32>,
    pub z: Vec<u32>,
    pub y_out: Vec<u32>,
    pub z_out: Vec<u32>,
}

impl Case {
    pub fn new(n: usize, seed: u32) -> Self {
        let x: Vec<u32> = (0..n as u32)
            .map(|i| lcg(i ^ seed.wrapping_mul(7919)))
            .collect();
        let z: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(seed + 3)).collect();
        Case {
            x,
            z,
            y_out: Vec::new(),
            z_out: Vec::new(),
        }
    }

    pub fn check(&self, what: &str) {
        let y: Vec<u32> = self.x.iter().map(|&v| lcg(lcg(v))).collect();
        let z: Vec<u32> = self.z.iter().zip(&y).map(|(z, y)| z ^ y).collect();
        assert_same(&self.y_out, &y, &format!("{what}: y"));
        assert_same(&self.z_out, &z, &format!("{what}: z"));
    }
}

/// `cases` of sizes `sizes`, seeds from `seed`.
pub fn cases(sizes: &[usize], seed: u32) -> Vec<Case> {
    sizes
        .iter()
        .enumerate()
        .map(|(i, &n)| Case::new(n, seed + i as u32))
        .collect()
}

pub fn assert_same(got: &[u32], want: &[u32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
        panic!(
            "{what}: element {i} is {}, the CPU says {}",
            got[i], want[i]
        );
    }
}

/// The untyped instances of `cases`.
pub fn instances(cases: &mut [Case]) -> Vec<Instance<'_>> {
    cases
        .iter_mut()
        .map(|c| {
            let Case {
                x, z, y_out, z_out, ..
            } = c;
            Instance::new(
                x.len() as u64,
                vec![
                    Feed::Host(bytemuck::cast_slice(x)),
                    Feed::Host(bytemuck::cast_slice(z)),
                ],
                // Outputs in declaration order: `z` (inout), then `y`.
                vec![Sink::from(z_out), Sink::from(y_out)],
            )
        })
        .collect()
}
