//! Opening device sets: filters, lists and their errors, a graph that
//! fails on one device, and a set of one device beside `Graph::run_batch`.

use vyre_graph::__private::inject_backend_panics;
use vyre_graph::{BackendError, DispatchConfig, Engine, Feed, GpuFilter, Gpus, GraphSet, wgpu};

use crate::cases::{Chain, cases, instances, lavapipe, set_of};

#[test]
fn lists_must_be_non_empty_and_name_each_gpu_once() {
    let error = Gpus::from_gpus(Vec::new()).expect_err("empty");
    assert!(
        matches!(error, BackendError::InvalidDeviceSet { .. }),
        "{error}"
    );
    let gpus = lavapipe(2);
    let one = gpus.get(0).expect("0").clone();
    let error = Gpus::from_gpus(vec![one.clone(), one.clone()]).expect_err("twice");
    assert!(
        error
            .to_string()
            .contains("devices 0 and 1 are the same Gpu"),
        "{error}"
    );
    let two = Gpus::from_gpus(vec![one, gpus.get(1).expect("1").clone()]).expect("two");
    assert_eq!(two.len(), 2);
    assert_ne!(two.get(0).map(|g| g.id()), two.get(1).map(|g| g.id()));
    assert!(two.get(2).is_none());
}

#[test]
fn a_filter_that_matches_nothing_names_itself_the_adapters_and_the_setup_step() {
    let filter = GpuFilter::default()
        .with_backends(wgpu::Backends::VULKAN)
        .with_name("no such adapter");
    let error = Gpus::open(&filter).expect_err("no match");
    let message = error.to_string();
    assert!(matches!(error, BackendError::NoAdapter { .. }), "{message}");
    assert!(message.contains("\"no such adapter\""), "{message}");
    assert!(
        message.contains("llvmpipe"),
        "the adapters found: {message}"
    );
    assert!(message.contains("mesa-vulkan-drivers"), "{message}");
    let filter = GpuFilter::default()
        .with_backends(wgpu::Backends::VULKAN)
        .with_device_types(&[wgpu::DeviceType::DiscreteGpu]);
    // lavapipe is a CPU device.
    assert!(Gpus::open(&filter).is_err());
    let filter = filter
        .with_device_types(&[wgpu::DeviceType::Cpu])
        .with_devices_per_adapter(3);
    assert_eq!(Gpus::open(&filter).expect("lavapipe").len(), 3);
}

#[test]
fn a_graph_that_fails_on_one_device_names_it() {
    let gpus = lavapipe(2);
    inject_backend_panics(gpus.get(1).expect("1"), 1);
    let error = GraphSet::new(&gpus, Chain::SPEC).expect_err("device 1 panics");
    assert!(
        matches!(error, BackendError::OnDevice { device: 1, .. }),
        "{error}"
    );
    // Both devices stay usable.
    let set = GraphSet::new(&gpus, Chain::SPEC).expect("set");
    assert_eq!(set.len(), 2);
    let error = set.retry(5).expect_err("no device 5");
    assert!(error.to_string().contains("no device 5"), "{error}");
}

#[test]
fn a_set_of_one_device_gives_graph_s_results_and_reports() {
    let set = set_of(1, Chain::SPEC);
    let graph = set.graph(0).expect("graph");
    let config = DispatchConfig::default();
    assert_eq!(Engine::spec(&set).name, Chain::SPEC.name);
    let x = [1u32, 2, 3];
    assert_eq!(
        set.instance_size(
            0,
            &[
                Feed::Host(bytemuck::cast_slice(&x)),
                Feed::Host(bytemuck::cast_slice(&x))
            ]
        )
        .expect("size"),
        3
    );
    let mut a = cases(&[1000, 5, 1000], 1);
    let mut b = cases(&[1000, 5, 1000], 1);
    let mut batch = instances(&mut a);
    let on_set = set.run_batch(&config, &mut batch).expect("set");
    drop(batch);
    let mut batch = instances(&mut b);
    let on_graph = graph.run_batch(&config, &mut batch).expect("graph");
    drop(batch);
    assert_eq!(
        (on_set.submissions, on_set.chunks, on_set.stacked),
        (on_graph.submissions, on_graph.chunks, on_graph.stacked)
    );
    for (i, (p, q)) in a.iter().zip(&b).enumerate() {
        p.check(&format!("set {i}"));
        assert_eq!((&p.y_out, &p.z_out), (&q.y_out, &q.z_out));
        assert_eq!(on_set.runs[i].as_ref().expect("run").device, 0);
    }
    let mut stream = instances(&mut a);
    let results = set.run_many(&config, 2, &mut stream);
    drop(stream);
    assert!(
        results
            .iter()
            .all(|r| r.as_ref().is_ok_and(|r| r.device == 0))
    );
    a.iter().for_each(|c| c.check("stream"));
}
