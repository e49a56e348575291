//! Two graphs in one file, each with a WGSL struct named `Params`, in
//! separate modules.

mod first {
    use vyre_graph::graph;

    graph! {
        pub struct First;

        kernel k = wgsl {
            struct Params { scale: f32 }
            @group(0) @binding(0) var<uniform> params: Params;
            @group(0) @binding(1) var<storage, read_write> out: array<f32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&out) { out[g.x] = f32(g.x) * params.scale; }
            }
        };

        uniform params;
        output out[n];

        node k(params: params, out: out) over n;
    }
}

mod second {
    use vyre_graph::graph;

    graph! {
        pub struct Second;

        kernel k = wgsl {
            struct Params { offset: u32, count: u32 }
            @group(0) @binding(0) var<uniform> params: Params;
            @group(0) @binding(1) var<storage, read_write> out: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < min(arrayLength(&out), params.count) { out[g.x] = g.x + params.offset; }
            }
        };

        uniform params;
        output out[n];

        node k(params: params, out: out) over n;
    }
}

fn _typed(a: &first::First, b: &second::Second) -> Result<(), vyre_graph::BackendError> {
    let _: Vec<f32> = a.run(16, &first::Params { scale: 2.0 })?.out;
    let _: Vec<u32> = b
        .run(
            16,
            &second::Params {
                offset: 1,
                count: 16,
            },
        )?
        .out;
    Ok(())
}

fn main() {}
