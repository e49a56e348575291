//! Resident data in a device set: an instance fed or drained by a handle
//! runs on the handle's device; a handle of a Gpu outside the set, of two
//! devices, of a device left out, or of a device replaced by `retry` is a
//! clear error before anything runs.

use vyre_graph::__private::inject_device_loss;
use vyre_graph::{
    BackendError, DispatchConfig, Engine, Feed, Gpu, GpuBufferHandle, Instance, Sink,
};

use crate::cases::{Case, Chain, cases, instances, lcg, set_of};

/// The CPU's `y` for `x`.
fn want_y(x: &[u32]) -> Vec<u32> {
    x.iter().map(|&v| lcg(lcg(v))).collect()
}

#[test]
fn an_instance_with_a_device_s_handles_runs_on_that_device() {
    let set = set_of(3, Chain::SPEC);
    let gpus = set.gpus();
    let x: Vec<u32> = (0..1000).map(lcg).collect();
    let z = vec![5u32; 1000];
    for device in [0usize, 2] {
        let gpu = gpus.get(device).expect("device");
        let x_handle = GpuBufferHandle::from_slice(gpu, &x).expect("x");
        let y_handle = set
            .graph(device)
            .expect("graph")
            .create_buffer(3, 1000)
            .expect("y");
        let mut host_cases = cases(&[1000; 8], 10);
        let mut batch = instances(&mut host_cases);
        let mut z_out: Vec<u32> = Vec::new();
        batch.insert(
            3,
            Instance::new(
                1000,
                vec![
                    Feed::Device(&x_handle),
                    Feed::Host(bytemuck::cast_slice(&z)),
                ],
                vec![Sink::from(&mut z_out), Sink::Device(&y_handle)],
            ),
        );
        let report = set
            .run_batch(&DispatchConfig::default(), &mut batch)
            .expect("batch");
        drop(batch);
        assert_eq!(report.runs[3].as_ref().expect("resident").device, device);
        let y: Vec<u32> = y_handle.read_as(gpu).expect("read");
        let want = want_y(&x);
        crate::cases::assert_same(&y, &want, "resident y");
        let z_want: Vec<u32> = z.iter().zip(&want).map(|(z, y)| z ^ y).collect();
        crate::cases::assert_same(&z_out, &z_want, "resident z");
        host_cases.iter().for_each(|c| c.check("host instance"));
    }
}

/// A batch of host cases with instance 2 fed `x` from `handle`; the error
/// of the batch, with nothing run.
fn refused(set: &vyre_graph::GraphSet, handles: [&GpuBufferHandle; 2]) -> BackendError {
    let mut host_cases = cases(&[100; 4], 20);
    let z = vec![0u32; 100];
    let mut batch = instances(&mut host_cases);
    batch[2] = Instance::new(
        100,
        vec![
            Feed::Device(handles[0]),
            Feed::Host(bytemuck::cast_slice(&z)),
        ],
        vec![Sink::Skip, Sink::Device(handles[1])],
    );
    let error = set
        .run_batch(&DispatchConfig::default(), &mut batch)
        .expect_err("refused");
    drop(batch);
    assert!(
        host_cases.iter().all(|c: &Case| c.y_out.is_empty()),
        "nothing ran"
    );
    assert!(
        matches!(error, BackendError::BatchInstance { index: 2, .. }),
        "{error}"
    );
    error
}

#[test]
fn handles_outside_the_set_of_two_devices_or_of_a_device_left_out_are_refused() {
    let set = set_of(2, Chain::SPEC);
    let gpus = set.gpus();
    let x: Vec<u32> = (0..100).collect();
    let on = |gpu: &Gpu| GpuBufferHandle::from_slice(gpu, &x).expect("handle");
    let (zero, one) = (on(gpus.get(0).expect("0")), on(gpus.get(1).expect("1")));
    let outsider = Gpu::new().expect("another Gpu");
    let foreign = on(&outsider);

    let message = refused(&set, [&foreign, &zero]).to_string();
    assert!(message.contains("outside this device set"), "{message}");
    let message = refused(&set, [&zero, &one]).to_string();
    assert!(
        message.contains("device 1") && message.contains("device 0"),
        "{message}"
    );

    inject_device_loss(gpus.get(1).expect("1"), 0);
    let mut lose = cases(&[100; 8], 30);
    let mut batch = instances(&mut lose);
    set.run_batch(&DispatchConfig::default(), &mut batch)
        .expect("runs on device 0");
    drop(batch);
    lose.iter().for_each(|c| c.check("device 1 lost"));
    let message = refused(&set, [&one, &one]).to_string();
    assert!(
        message.contains("left out") && message.contains("retry(1)"),
        "{message}"
    );

    set.retry(1).expect("retry");
    let message = refused(&set, [&one, &one]).to_string();
    assert!(
        message.contains("replaced by `GraphSet::retry`"),
        "{message}"
    );
}
