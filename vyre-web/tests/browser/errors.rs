//! A run with a wrong input length is the same error as natively
//! (`BackendError::LengthMismatch`, `tests/errors/runtime_errors.rs`),
//! through the typed and the untyped API, raised before anything is
//! submitted; a timeout, which a browser cannot bound, is
//! `TimeoutUnsupported`; then a correct run of the same graph is right.

use crate::common::{assert_same, own_gpu};

use crate::shared::pair::{Pair, pair_cpu as cpu};

use vyre_graph::{BackendError, DispatchConfig, Feed, Sink};
use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen_test]
async fn a_wrong_input_length_is_named_then_the_graph_runs() {
    let gpu = own_gpu().await;
    let graph = Pair::new_async(&gpu).await.expect("graph");
    let config = DispatchConfig::default();
    let x: Vec<u32> = (0..1000).collect();
    let z: Vec<u32> = (0..1000).map(|i| i * 7).collect();

    // Typed: `n` comes from `x`; `z` is one element short.
    let before = gpu.counters();
    let err = match graph.run_async(&config, &x, &z[..999]).await {
        Ok(_) => panic!("a short input must be an error"),
        Err(e) => e,
    };
    assert!(
        matches!(&err, BackendError::LengthMismatch { buffer, n: 1000, expected: 4000, actual: 3996 } if buffer == "z"),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .ends_with("but has 3996; size it as the graph declares"),
        "{err}"
    );
    assert_eq!(
        gpu.counters().since(&before).submissions,
        0,
        "nothing submitted"
    );

    // Untyped: the same error for a feed the plan does not fit.
    let mut y = vec![0u32; 1000];
    let err = match graph
        .graph()
        .run_async(
            &config,
            1000,
            &[
                Feed::Host(bytemuck::cast_slice(&x)),
                Feed::Host(bytemuck::cast_slice(&z[..999])),
            ],
            &mut [Sink::Host(bytemuck::cast_slice_mut(&mut y))],
        )
        .await
    {
        Ok(_) => panic!("a short feed must be an error"),
        Err(e) => e,
    };
    assert!(
        matches!(&err, BackendError::LengthMismatch { buffer, .. } if buffer == "z"),
        "{err:?}"
    );

    // A wait cannot be bounded in a browser: an error, nothing submitted.
    let timed = DispatchConfig::default().with_timeout(std::time::Duration::from_secs(5));
    let before = gpu.counters();
    match graph.run_async(&timed, &x, &z).await {
        Ok(_) => panic!("a timeout in a browser must be an error"),
        Err(e) => assert!(
            matches!(e, BackendError::TimeoutUnsupported { .. }),
            "{e:?}"
        ),
    }
    assert_eq!(
        gpu.counters().since(&before).submissions,
        0,
        "nothing submitted"
    );

    // The same graph, right lengths: right.
    let out = graph
        .run_async(&config, &x, &z)
        .await
        .expect("a correct run");
    assert_same(&out.y, &cpu(&x, &z), "after the errors");
}
