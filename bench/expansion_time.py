#!/usr/bin/env python3
"""How long `graph!` takes to expand against the length of a `repeat`.

Generates a crate with one `graph!` per (shape, repeat count) beside the
workspace (under target/bench-expansion/), checks it with cargo three
times with VYRE_MACRO_TIMINGS=1 (the macro prints its own expansion time)
and prints the median per invocation. `--profile opt` builds the macro
optimised ([profile.dev.build-override] opt-level = 3, as the workspace
does and as users should); `--profile debug` unoptimised, as the macro's
unit tests run it.

Shapes:
  chain  `repeat R` of one fusable node with an override per node (R + 2 nodes)
  plain  the same without overrides, `fuse off;` (R + 2 nodes)
  copy   `repeat R` of one fusable copy node (R nodes; the fuzz test's reference)
  wide   eight independent chains of `repeat R` fusable nodes, joined (8 R + 16 nodes)

    python3 bench/expansion_time.py --profile opt --shape chain --counts 256,512,1024,2048,4094,8192
"""
import argparse
import os
import re
import statistics
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

STEP = """
        @group(0) @binding(0) var<storage, read> src: array<u32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            if g.x < arrayLength(&src) { dst[g.x] = src[g.x] * MUL + 1u; }
        }"""


def chain(name, r, overrides):
    mul = "override MUL: u32 = 3u;" if overrides else "const MUL: u32 = 3u;"
    with_ = " with { MUL = i % 3 + 2 }" if overrides else ""
    fuse = "" if overrides else "fuse off;"
    return f"""pub struct {name}; {fuse}
    kernel step = wgsl {{ {mul} {STEP} }};
    input x[n]; intermediate a[n]; intermediate b[n]; output y[n];
    node first = step(src: x, dst: a) over n;
    repeat {r} as i {{ node mid = step(src: ping(a, b), dst: pong(a, b)) over n{with_}; }}
    node last = step(src: a, dst: y) over n;"""


def copy(name, r):
    return f"""pub struct {name};
    kernel copy = wgsl {{
        @group(0) @binding(0) var<storage, read> src: array<f32>;
        @group(0) @binding(1) var<storage, read_write> dst: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {{
            if g.x < arrayLength(&dst) {{ dst[g.x] = src[g.x]; }}
        }}
    }};
    input x[n]; output y[n];
    repeat {r} as i {{ node copy(src: x, dst: y) over n; }}"""


def wide(name, r):
    items = [f"pub struct {name};",
             f"kernel step = wgsl {{ override MUL: u32 = 3u; {STEP} }};",
             """kernel join = wgsl {
                @group(0) @binding(0) var<storage, read> a: array<u32>;
                @group(0) @binding(1) var<storage, read> b: array<u32>;
                @group(0) @binding(2) var<storage, read_write> out: array<u32>;
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                    if g.x < arrayLength(&out) { out[g.x] = a[g.x] ^ b[g.x]; }
                }
             };""",
             "input x[n]; output y[n]; intermediate l[n]; intermediate m[n];"]
    for c in range(8):
        items.append(f"intermediate p{c}[n]; intermediate q{c}[n];")
    for c in range(8):
        items.append(f"node c{c} = step(src: x, dst: p{c}) over n with {{ MUL = {c + 1} }};")
        items.append(f"repeat {r} as i {{ node c{c}s = step(src: ping(p{c}, q{c}), dst: pong(p{c}, q{c})) over n with {{ MUL = {c + 1} }}; }}")
    last = lambda c: f"p{c}" if r % 2 == 0 else f"q{c}"
    items.append(f"node j0 = join(a: {last(0)}, b: {last(1)}, out: l) over n;")
    for c in range(2, 8):
        src, dst = ("l", "m") if c % 2 == 0 else ("m", "l")
        items.append(f"node j{c - 1} = join(a: {src}, b: {last(c)}, out: {dst}) over n;")
    items.append(f"node j7 = join(a: l, b: {last(0)}, out: y) over n;")
    return "\n    ".join(items)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile", choices=["opt", "debug"], default="opt")
    ap.add_argument("--shape", choices=["chain", "plain", "copy", "wide"], default="chain")
    ap.add_argument("--counts", default="256,512,1024,2048,4094,8192")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--target-dir", default=None)
    args = ap.parse_args()
    counts = [int(c) for c in args.counts.split(",")]
    krate = ROOT / "target" / "bench-expansion" / "crate"
    target = Path(args.target_dir) if args.target_dir else ROOT / "target" / "bench-expansion" / args.profile
    (krate / "src").mkdir(parents=True, exist_ok=True)
    override = "[profile.dev.build-override]\nopt-level = 3\n" if args.profile == "opt" else ""
    (krate / "Cargo.toml").write_text(
        f'[package]\nname = "expansion-bench"\nversion = "0.0.0"\nedition = "2024"\npublish = false\n\n'
        f'[dependencies]\nvyre-graph = {{ path = "{ROOT / "vyre-graph"}" }}\n\n{override}\n[workspace]\n')
    lock = krate / "Cargo.lock"
    if not lock.exists():
        lock.write_text((ROOT / "Cargo.lock").read_text())
    lib = "#![allow(warnings)]\n"
    for r in counts:
        name = f"G{r}"
        if args.shape == "wide":
            body = wide(name, r)
        elif args.shape == "copy":
            body = copy(name, r)
        else:
            body = chain(name, r, args.shape == "chain")
        lib += f"mod r{r} {{ vyre_graph::graph! {{ {body} }} }}\n"
    times = {r: [] for r in counts}
    outcome = {}
    env = dict(os.environ, VYRE_MACRO_TIMINGS="1")
    for _ in range(args.runs):
        (krate / "src" / "lib.rs").write_text(lib)  # a fresh mtime: expand again
        out = subprocess.run(
            ["cargo", "check", "--offline", "--manifest-path", str(krate / "Cargo.toml"),
             "--target-dir", str(target)],
            env=env, capture_output=True, text=True).stderr
        for line in out.splitlines():
            m = re.match(r"vyre graph! `G(\d+)`: (?:(\d+) kernels? expanded|(\d+) errors reported) in ([\d.]+) ms", line)
            if m:
                r = int(m.group(1))
                times[r].append(float(m.group(4)))
                outcome[r] = f"{m.group(2)} kernels" if m.group(2) else f"{m.group(3)} error(s)"
    print(f"shape {args.shape}, macro {args.profile}, median of {args.runs} runs")
    print("| repeat | ms | outcome |")
    print("|---:|---:|---|")
    for r in counts:
        t = statistics.median(times[r]) if times[r] else float("nan")
        print(f"| {r} | {t:.1f} | {outcome.get(r, 'no timing printed')} |")


if __name__ == "__main__":
    main()
