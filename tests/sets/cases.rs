//! The graphs the device-set tests run, their instances, and the CPU's
//! answers.

use vyre_graph::{Feed, GpuFilter, Gpus, GraphSet, Instance, Sink, wgpu};

// The batch tests' graphs (`tests/common/shared/batches.rs`), written once
// for this binary, `tests/batches/` and the browser suite.
pub use crate::shared::batches::chain::ChainOutputs;
pub use crate::shared::batches::{Chain, Evens};

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
