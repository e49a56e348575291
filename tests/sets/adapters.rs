//! Two different adapters in one device set: lavapipe (Vulkan) and
//! llvmpipe's OpenGL (through EGL), with the `gl` feature.

use vyre_graph::{DispatchConfig, Engine, GpuFilter, Gpus, GraphSet, wgpu};

use crate::cases::{Chain, cases, instances};

#[test]
fn lavapipe_and_llvmpipe_gl_run_one_batch_together() {
    let filter = GpuFilter::default().with_backends(wgpu::Backends::VULKAN | wgpu::Backends::GL);
    let gpus = Gpus::open(&filter).unwrap_or_else(|e| panic!("no adapters: {e}"));
    let backends: Vec<wgpu::Backend> = gpus.iter().map(|g| g.adapter().backend).collect();
    assert!(backends.contains(&wgpu::Backend::Vulkan), "{backends:?}");
    assert!(backends.contains(&wgpu::Backend::Gl), "{backends:?}");
    let set = GraphSet::new(&gpus, Chain::SPEC).expect("set");
    let config = DispatchConfig::default();
    for (b, n) in [(1usize, 1000usize), (2, 1000), (37, 1000), (1000, 64)] {
        let mut batch_cases = cases(&vec![n; b], 3 * b as u32);
        let mut batch = instances(&mut batch_cases);
        let report = set.run_batch(&config, &mut batch).expect("batch");
        drop(batch);
        let mut count = vec![0usize; gpus.len()];
        for run in &report.runs {
            count[run.as_ref().expect("run").device] += 1;
        }
        batch_cases
            .iter()
            .for_each(|c| c.check(&format!("B = {b}")));
        if b >= 37 {
            assert!(
                count.iter().filter(|&&c| c > 0).count() >= 2,
                "B = {b}: {count:?}"
            );
        }
    }
}
