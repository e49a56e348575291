//! Kernels that share code through WESL imports (`docs/modules.md`): graph
//! modules and files, chains of depth 1 to 3, a diamond, a local item that
//! shadows an imported one's name, `@if` flags on and off, one module
//! imported by every kernel, one imported struct as a uniform in one kernel
//! and as storage elements in another, and fusion across kernels that
//! share imported helpers (bit-identical to `fuse off;`), and inline paths
//! (`package::rng::hash(x)`, `super::twist::twist(x)`) with no `import`
//! line. Every result is checked element by element against a CPU
//! reference.

use crate::common;

const K: u32 = 7;
fn mix(x: u32) -> u32 {
    x.wrapping_mul(K).wrapping_add(1)
}
fn twist(x: u32) -> u32 {
    (x ^ (x >> 3)).wrapping_add(K)
}
fn deep(x: u32) -> u32 {
    twist(mix(x))
}
/// The kernel-local `mix` of `shadow` (not the module's).
fn local_mix(x: u32) -> u32 {
    x.wrapping_add(100)
}

/// The same graph twice in module `$m`: `Fused` as written and `Unfused`
/// with `fuse off;`.
macro_rules! both {
    ($m:ident { $($body:tt)* }) => {
        #[allow(dead_code)]
        mod $m {
            use vyre_graph::graph;
            graph! { pub struct Fused; $($body)* }
            graph! { pub struct Unfused; fuse off; $($body)* }
        }
    };
}

both!(shared {
    // Depth 1: consts. Depth 2: mix -> consts. Depth 3: deep -> mix -> consts,
    // and deep -> twist (a file) -> consts: a diamond.
    module consts = wgsl { const K: u32 = 7u; };
    module mix = wgsl {
        import package::consts::K;
        fn mix(x: u32) -> u32 { return x * K + 1u; }
    };
    module deep = "
        import package::mix::mix;
        import package::tests::wesl::twist::twist;
        fn deep(x: u32) -> u32 { return twist(mix(x)); }
    ";

    kernel first = wgsl {
        import package::consts::K;
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&src) { dst[g.x] = src[g.x] + K; }
        }
    };
    kernel second = wgsl {
        import package::mix::mix;
        import package::consts::K;
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&src) { dst[g.x] = mix(src[g.x]) - K; }
        }
    };
    kernel shadow = wgsl {
        import package::deep::deep;
        import package::consts::K;
        // A local `mix`: `deep` still uses the module's.
        fn mix(x: u32) -> u32 { return x + 100u; }
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&src) { dst[g.x] = mix(deep(src[g.x])) ^ K; }
        }
    };

    input x[n];
    intermediate a[n];
    intermediate b[n];
    output y[n];
    node first(src: x, dst: a) over n;
    node second(src: a, dst: b) over n;
    node shadow(src: b, dst: y) over n;
});

fn shared_reference(x: &[u32]) -> Vec<u32> {
    x.iter()
        .map(|&v| {
            let a = v.wrapping_add(K);
            let b = mix(a).wrapping_sub(K);
            local_mix(deep(b)) ^ K
        })
        .collect()
}

#[test]
fn imported_helpers_run_fused_and_unfused_alike() {
    let gpu = common::gpu();
    assert_eq!(shared::Fused::SPEC.fused.len(), 1, "the three nodes fuse");
    assert!(shared::Unfused::SPEC.fused.is_empty());
    let fused = shared::Fused::new(&gpu).expect("fused");
    let unfused = shared::Unfused::new(&gpu).expect("unfused");
    for n in [0usize, 1, 63, 64, 65, 100_003] {
        let x: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        if n == 0 {
            // Empty in, empty out, with nothing run; then the next size
            // runs correctly.
            assert!(fused.run(&x[..]).expect("n = 0").y.is_empty());
            assert!(unfused.run(&x[..]).expect("n = 0").y.is_empty());
            continue;
        }
        let want = shared_reference(&x);
        let a = fused.run(&x[..]).expect("fused run").y;
        let b = unfused.run(&x[..]).expect("unfused run").y;
        assert_eq!(a.len(), n);
        for (i, ((a, b), w)) in a.iter().zip(&b).zip(&want).enumerate() {
            assert_eq!(a, w, "fused, n = {n}, element {i}");
            assert_eq!(
                a.to_bits_or_self(),
                b.to_bits_or_self(),
                "fused vs unfused, element {i}"
            );
        }
    }
}

/// `u32` compared as bits (the same as the value; named for the intent).
trait Bits {
    fn to_bits_or_self(&self) -> u32;
}
impl Bits for u32 {
    fn to_bits_or_self(&self) -> u32 {
        *self
    }
}

/// The linked WGSL keeps each module's items apart (mangled) and the
/// kernel's own names as written.
#[test]
fn linked_kernels_keep_their_entry_point_and_mangle_imports() {
    let spec = &shared::Unfused::SPEC;
    let shadow = spec
        .kernels
        .iter()
        .find(|k| k.label == "shadow")
        .expect("kernel shadow");
    let wgsl: &str = &shadow.source;
    assert!(wgsl.contains("fn main("), "{wgsl}");
    assert!(
        wgsl.contains("fn mix("),
        "the local mix keeps its name: {wgsl}"
    );
    assert!(wgsl.contains("package_mix_mix"), "{wgsl}");
    assert!(wgsl.contains("package_tests_wesl_twist_twist"), "{wgsl}");
    assert!(!wgsl.contains("import"), "{wgsl}");
}

#[allow(dead_code)]
mod flags {
    use vyre_graph::graph;

    macro_rules! scaled {
        ($name:ident $($flags:tt)*) => {
            graph! {
                pub struct $name;
                $($flags)*
                module scale = wgsl {
                    @if(fast) fn scale(x: f32) -> f32 { return x * 2.0; }
                    @else fn scale(x: f32) -> f32 { return x * 3.0; }
                };
                kernel k = wgsl {
                    import package::scale::scale;
                    @group(0) @binding(0) var<storage, read> src: array<f32>;
                    @group(0) @binding(1) var<storage, read_write> dst: array<f32>;
                    @compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                        if g.x < arrayLength(&src) { dst[g.x] = scale(src[g.x]); }
                    }
                };
                input x[n];
                output y[n];
                node k(src: x, dst: y) over n;
            }
        };
    }
    scaled!(Fast flags [fast];);
    scaled!(Slow);
}

#[test]
fn if_flags_on_and_off_give_different_kernels() {
    let gpu = common::gpu();
    let x: Vec<f32> = (0..1000).map(|i| i as f32 * 0.25 - 17.0).collect();
    let fast = flags::Fast::new(&gpu)
        .expect("fast")
        .run(&x[..])
        .expect("run")
        .y;
    let slow = flags::Slow::new(&gpu)
        .expect("slow")
        .run(&x[..])
        .expect("run")
        .y;
    for (i, v) in x.iter().enumerate() {
        assert_eq!(fast[i], v * 2.0, "flag on, element {i}");
        assert_eq!(slow[i], v * 3.0, "flag off, element {i}");
    }
}

#[allow(dead_code)]
mod structs {
    use vyre_graph::graph;
    graph! {
        pub struct Moves;
        module body = wgsl {
            struct Body { pos: f32, vel: f32 }
        };
        kernel step = wgsl {
            import package::body::Body;
            @group(0) @binding(0) var<uniform> push: Body;
            @group(0) @binding(1) var<storage, read_write> bodies: array<Body>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&bodies) {
                    let b = bodies[g.x];
                    bodies[g.x] = Body(b.pos + b.vel + push.pos, b.vel + push.vel);
                }
            }
        };
        kernel energy = wgsl {
            import package::body::Body;
            @group(0) @binding(0) var<storage, read> bodies: array<Body>;
            @group(0) @binding(1) var<storage, read_write> out: array<f32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&bodies) { out[g.x] = bodies[g.x].vel * bodies[g.x].vel; }
            }
        };
        uniform push;
        inout bodies[n];
        output out[n];
        node step(push: push, bodies: bodies) over n;
        node energy(bodies: bodies, out: out) over n;
    }
}

#[test]
fn an_imported_struct_is_one_rust_type_as_uniform_and_storage() {
    use structs::{Body, Moves};
    let gpu = common::gpu();
    let graph = Moves::new(&gpu).expect("graph");
    for n in [1usize, 64, 1000] {
        let bodies: Vec<Body> = (0..n)
            .map(|i| Body {
                pos: i as f32,
                vel: 0.5 * i as f32 - 3.0,
            })
            .collect();
        let push = Body {
            pos: 1.0,
            vel: 0.25,
        };
        let out = graph.run(&push, &bodies[..]).expect("run");
        for (i, b) in bodies.iter().enumerate() {
            let vel = b.vel + push.vel;
            assert_eq!(out.bodies[i].pos, b.pos + b.vel + push.pos, "pos {i}");
            assert_eq!(out.bodies[i].vel, vel, "vel {i}");
            assert_eq!(out.out[i], vel * vel, "energy {i}");
        }
    }
}

/// Kernels that call a module's function by its inline path, without an
/// `import` line: a token kernel and a literal kernel (`package::`) and a
/// file kernel (`super::`, from `tests/wesl/inline_twist.wgsl`).
#[allow(dead_code)]
mod inline {
    use vyre_graph::graph;
    graph! {
        pub struct InlinePaths;
        module consts = wgsl { const K: u32 = 7u; };
        module rng = "fn hash(x: u32) -> u32 { return x * 3u; }";
        kernel tokens = wgsl {
            @group(0) @binding(0) var<storage, read> d: array<u32>;
            @group(0) @binding(1) var<storage, read_write> e: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&d) { e[g.x] = package::rng::hash(d[g.x]); }
            }
        };
        kernel literal = "
            @group(0) @binding(0) var<storage, read> d: array<u32>;
            @group(0) @binding(1) var<storage, read_write> e: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                if g.x < arrayLength(&d) { e[g.x] = package::rng::hash(d[g.x]) + package::consts::K; }
            }
        ";
        kernel file_kernel = file "tests/wesl/inline_twist.wgsl";
        input x[n];
        intermediate a[n];
        intermediate b[n];
        output y[n];
        node tokens(d: x, e: a) over n;
        node literal(d: a, e: b) over n;
        node file_kernel(src: b, dst: y) over n;
    }
}

#[test]
fn inline_paths_link_without_an_import_line() {
    let gpu = common::gpu();
    let graph = inline::InlinePaths::new(&gpu).expect("graph");
    let hash = |v: u32| v.wrapping_mul(3);
    for n in [1usize, 64, 1000] {
        let x: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        let y = graph.run(&x[..]).expect("run").y;
        assert_eq!(y.len(), n);
        for (i, v) in x.iter().enumerate() {
            let want = twist(hash(hash(*v)).wrapping_add(K));
            assert_eq!(y[i], want, "n = {n}, element {i}");
        }
    }
    for k in inline::InlinePaths::SPEC.kernels.iter() {
        let linked = !k.source.contains("package::") && !k.source.contains("super::");
        assert!(linked, "{}: {}", k.label, k.source);
    }
}

/// A file kernel whose path climbs with `..` (as a crate's kernel beside
/// another crate's files does) links like any other: `..` never reaches the
/// mangled names (it used to, as `.`: "expected `;`, found `.`").
#[allow(dead_code)]
mod climbing {
    use vyre_graph::graph;
    graph! {
        pub struct Climbing;
        module consts = wgsl { const K: u32 = 7u; };
        kernel file_kernel = file "tests/kernels/../wesl/inline_twist.wgsl";
        input x[n];
        output y[n];
        node file_kernel(src: x, dst: y) over n;
    }
}

#[test]
fn a_file_kernel_path_with_dot_dot_links() {
    let gpu = common::gpu();
    let graph = climbing::Climbing::new(&gpu).expect("graph");
    for n in [1usize, 1000] {
        let x: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(40_503)).collect();
        let y = graph.run(&x[..]).expect("run").y;
        let want: Vec<u32> = x.iter().map(|&v| twist(v)).collect();
        assert_eq!(y, want, "n = {n}");
    }
}
