//! A WGSL struct as a uniform and as a storage element; `vec4` elements.
//! The generated structs have the WGSL field names, explicit padding and
//! `Default`.

use vyre_graph::graph;

graph! {
    pub struct Particles;

    kernel step = wgsl {
        struct Params { dt: f32, gravity: vec3<f32>, count: u32 }
        struct Particle { pos: vec3<f32>, mass: f32, vel: vec4<f32>, id: u32 }
        @group(0) @binding(0) var<uniform> params: Params;
        @group(0) @binding(1) var<storage, read> src: array<Particle>;
        @group(0) @binding(2) var<storage, read_write> dst: array<Particle>;
        @group(0) @binding(3) var<storage, read_write> speed: array<vec4<f32>>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x >= min(arrayLength(&dst), params.count) { return; }
            var p = src[g.x];
            p.vel = p.vel + vec4<f32>(params.gravity * params.dt, 0.0);
            p.pos = p.pos + p.vel.xyz * params.dt;
            dst[g.x] = p;
            speed[g.x] = p.vel;
        }
    };

    uniform params;
    input particles[n];
    output moved[n];
    output speed[n];

    node step(params: params, src: particles, dst: moved, speed: speed) over n;
}

fn _typed(g: &Particles) -> Result<(), vyre_graph::BackendError> {
    let params = Params {
        dt: 0.1,
        gravity: [0.0, -9.8, 0.0],
        count: 1,
        ..Default::default()
    };
    let p = Particle {
        pos: [1.0, 2.0, 3.0],
        mass: 1.0,
        vel: [0.0; 4],
        id: 7,
        ..Default::default()
    };
    let out = g.run(&params, &[p][..])?;
    let moved: Vec<Particle> = out.moved;
    let speed: Vec<[f32; 4]> = out.speed;
    let _ = (moved[0].pos, moved[0].id, speed[0][3]);
    Ok(())
}

fn main() {
    // WGSL layout: Params is 32 bytes (vec3 aligned to 16), Particle 48.
    assert_eq!(std::mem::size_of::<Params>(), 32);
    assert_eq!(std::mem::size_of::<Particle>(), 48);
    assert_eq!(std::mem::offset_of!(Params, gravity), 16);
    assert_eq!(std::mem::offset_of!(Particle, vel), 16);
    let p = Particle {
        id: 3,
        ..Default::default()
    };
    assert_eq!(p.mass, 0.0);
}
