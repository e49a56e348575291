//! The WGSL of the kernels that reductions and scans lower to
//! (`lower/reduce.rs`), as plain text. Two kernels, each a workgroup of 256
//! invocations working on one *segment* of its source (`SEG` elements from
//! `workgroup_id.x * SEG`), so that the same input always combines in the
//! same order, whatever the adapter:
//!
//! - `reduce`: each invocation keeps [`LANES`] independent partial values
//!   and combines the segment's elements `lid, lid + 256, ..` into them in
//!   turn (coalesced loads, [`LANES`] in flight), then combines its partial
//!   values in a fixed tree, then a fixed binary tree in workgroup memory
//!   combines the 256 invocations' values; the result goes to
//!   `dst[workgroup]`.
//! - `scan`: the segment is scanned in tiles of 2,048 elements, 512 quads
//!   of 4; invocation `lid` owns quads `lid` and `256 + lid` (coalesced
//!   `vec4` loads and stores through vector views of a plain source and
//!   output, or single elements through workgroup memory padded one word
//!   in 32), combines each quad from the identity, and a Hillis-Steele
//!   scan combines the 512 quad totals. The carry into the segment is
//!   `offs[workgroup]` (the combined earlier segments) or the identity.
//!
//! A reduction loads single elements, so that a source fused on read (an
//! element-wise producer computing element `i`) combines in exactly the
//! order of the buffer it replaces: fused and unfused give the same bits.
//! On the H200 the coalesced scalar loads with 8 in flight read within 3%
//! of `vec4` loads at 2^24 elements (`GRAPH_BENCH_PROBE=reduce`). A scan's
//! paths all combine in the same order too.
//!
//! Float `max`/`min` return NaN when any element is NaN, and order `-0`
//! below `+0`; integer `sum` wraps (WGSL's `+`).

pub use super::types::scalar;
use super::types::{combine, hoist_enables, identity};
use crate::model::{ReduceKind, ReduceOp};

/// Invocations per workgroup of every generated kernel.
pub const WORKGROUP: u64 = 256;
/// Elements per workgroup of a whole-buffer reduction's first level, and
/// of a whole-buffer scan's segments: 128 per invocation, enough to keep
/// [`LANES`] loads in flight through 16 rounds.
pub const REDUCE_SEGMENT: u64 = 32768;
/// Elements per tile of a scan.
pub const SCAN_TILE: u64 = 2048;
/// Words of a scan tile in workgroup memory: one word of padding per 32.
const PADDED_TILE: u64 = SCAN_TILE + SCAN_TILE / 32;
/// Independent partial values per invocation of a reduction (loads in
/// flight).
pub const LANES: u64 = 8;

/// Where a generated kernel reads its elements from: a storage buffer
/// `src`, or (fused on read) the element-wise kernel that produces them.
#[derive(Clone, Debug)]
pub struct Source {
    /// Module-scope declarations (the `src` global, or the producer's text).
    pub decls: String,
    /// The body of `fn vyre_load(i: u32) -> T`.
    pub load: String,
    /// The number of elements, a WGSL expression.
    pub len: String,
    /// The first binding of group 0 the kernel's own globals may use.
    pub next_binding: u32,
    /// Whether a scan may load whole `vec4`s through `vyre_src4`, a vector
    /// view of the same buffer (a plain buffer source only).
    pub vector: bool,
    /// Whether a scan that loads whole `vec4`s also stores them, through
    /// `vyre_dst4`, a vector view of its destination (not when its stores
    /// are fused with a consumer, which reads `vyre_dst[i] = v;`).
    pub store4: bool,
    /// Whether the graph declares `features [subgroups]`: the kernel may
    /// then use subgroup operations (the device is checked at run time).
    pub subgroups: bool,
}

impl Source {
    /// A plain `array<ty>` storage buffer `src` at binding 0.
    pub fn buffer(ty: &str) -> Source {
        Source {
            decls: format!("@group(0) @binding(0) var<storage, read> src: array<{ty}>;\n"),
            load: "return src[i];".to_owned(),
            len: "arrayLength(&src)".to_owned(),
            next_binding: 1,
            vector: false,
            store4: false,
            subgroups: false,
        }
    }

    /// [`Source::buffer`], with `vyre_src4` bound to the same buffer as
    /// `array<vec4<ty>>` for a scan's loads.
    pub fn vector_buffer(ty: &str) -> Source {
        Source {
            vector: true,
            ..Source::buffer(ty)
        }
    }

    /// [`Source::vector_buffer`], with `vyre_dst4` bound to the scan's
    /// destination as `array<vec4<ty>>` for its stores.
    pub fn vector_buffers(ty: &str) -> Source {
        Source {
            store4: true,
            ..Source::vector_buffer(ty)
        }
    }

    /// The same source, for a graph that declares `features [subgroups]`
    /// (`subgroups`) or not.
    #[must_use]
    pub fn with_subgroups(mut self, subgroups: bool) -> Source {
        self.subgroups = subgroups;
        self
    }

    fn text(&self, ty: &str) -> String {
        format!(
            "{}fn vyre_load(i: u32) -> {ty} {{\n    {}\n}}\n",
            self.decls, self.load
        )
    }
}

/// Where a kernel's segment length comes from.
#[derive(Clone, Copy, Debug)]
pub enum Segment {
    /// A constant number of elements.
    Fixed(u64),
    /// The source's length divided by a constant number of rows.
    PerRow(u64),
    /// The whole source (one workgroup).
    Whole,
}

impl Segment {
    /// Elements per segment. A constant number of rows `r` has
    /// `ceil(len / r)` columns, as every size `n / k` rounds up: every
    /// element belongs to a row, the last rows may be partial or empty.
    fn wgsl(self, len: &str) -> String {
        match self {
            Segment::Fixed(k) => format!("{k}u"),
            Segment::PerRow(r) => format!("max(({len} + {}u) / {r}u, 1u)", r - 1),
            Segment::Whole => format!("max({len}, 1u)"),
        }
    }
}

/// The header shared by both kernels: the identity and `vyre_combine`.
fn prelude(op: ReduceOp, ty: &str, what: &str) -> String {
    format!(
        "// Generated by graph! for `{what}` on {ty}: a fixed combining order, so the same input gives the same bits.\nfn vyre_identity() -> {ty} {{ return {}; }}\n{}",
        identity(op, ty),
        combine(op, ty)
    )
}

/// The bounds `[start, end)` of this workgroup's segment.
fn bounds(segment: Segment, src: &Source) -> String {
    format!(
        "    let len = {};\n    let seg = {};\n    let w = wid.x;\n    var start = len;\n    if w <= len / seg {{ start = w * seg; }}\n    let end = start + min(seg, len - start);\n",
        src.len,
        segment.wgsl(&src.len)
    )
}

/// A reduction level: `dst[w]` = the combination of segment `w` of `src`.
pub fn reduce_kernel(op: ReduceOp, ty: &str, segment: Segment, src: &Source) -> String {
    let mut s = prelude(op, ty, &format!("reduce {}", op.name()));
    s.push_str(&src.text(ty));
    let b = src.next_binding;
    let subgroups = src.subgroups && matches!(ty, "f32" | "u32" | "i32");
    let builtins = if subgroups {
        ", @builtin(subgroup_invocation_id) vyre_si: u32, @builtin(subgroup_size) vyre_ss: u32, @builtin(subgroup_id) vyre_sid: u32, @builtin(num_subgroups) vyre_ns: u32"
    } else {
        ""
    };
    s.push_str(&format!(
        "@group(0) @binding({b}) var<storage, read_write> vyre_dst: array<{ty}>;\nvar<workgroup> part: array<{ty}, {WORKGROUP}>;\n\n@compute @workgroup_size({WORKGROUP})\nfn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>{builtins}) {{\n"
    ));
    s.push_str(&bounds(segment, src));
    s.push_str(&lanes_loop());
    if subgroups {
        s.push_str(&subgroup_tree());
    } else {
        s.push_str(&format!(
            "    part[lid.x] = acc;\n    workgroupBarrier();\n    for (var s = {}u; s > 0u; s >>= 1u) {{\n        if lid.x < s {{ part[lid.x] = vyre_combine(part[lid.x], part[lid.x + s]); }}\n        workgroupBarrier();\n    }}\n    if lid.x == 0u && w < arrayLength(&vyre_dst) {{ vyre_dst[w] = part[0]; }}\n}}\n",
            WORKGROUP / 2
        ));
    }
    s
}

/// The end of a reduction with `features [subgroups]`: a butterfly of
/// `subgroupShuffleXor` through `vyre_combine` in each subgroup (every
/// lane ends with the same value: the combinations are commutative), the
/// subgroups' values through workgroup memory, then one more butterfly.
/// The order depends on the adapter's subgroup size: the same bits on
/// every run of one adapter, not across adapters.
fn subgroup_tree() -> String {
    "    var v = acc;\n    for (var m = 1u; m < vyre_ss; m <<= 1u) { v = vyre_combine(v, subgroupShuffleXor(v, m)); }\n    if vyre_si == 0u { part[vyre_sid] = v; }\n    workgroupBarrier();\n    if vyre_sid == 0u {\n        var t = vyre_identity();\n        for (var j = vyre_si; j < vyre_ns; j += vyre_ss) { t = vyre_combine(t, part[j]); }\n        for (var m = 1u; m < vyre_ss; m <<= 1u) { t = vyre_combine(t, subgroupShuffleXor(t, m)); }\n        if vyre_si == 0u && w < arrayLength(&vyre_dst) { vyre_dst[w] = t; }\n    }\n}\n".to_owned()
}

/// The body that combines `start..end` into `acc`: [`LANES`] partial
/// values `a0..`, element `start + lid + 256 k` into `a(k % LANES)`, then
/// `a0..` in a fixed tree.
fn lanes_loop() -> String {
    let mut s = String::new();
    for k in 0..LANES {
        s.push_str(&format!("    var a{k} = vyre_identity();\n"));
    }
    let span = (LANES - 1) * WORKGROUP;
    s.push_str(&format!(
        "    var i = start + lid.x;\n    loop {{\n        if i >= end || end - i <= {span}u {{ break; }}\n"
    ));
    for k in 0..LANES {
        s.push_str(&format!(
            "        a{k} = vyre_combine(a{k}, vyre_load(i + {}u));\n",
            k * WORKGROUP
        ));
    }
    s.push_str(&format!(
        "        i += {}u;\n    }}\n    for (var k = 0u; i < end; k++) {{\n",
        LANES * WORKGROUP
    ));
    // The remainder goes to the lanes in the same order as full rounds.
    s.push_str("        let v = vyre_load(i);\n        switch k {\n");
    for k in 0..LANES {
        if k + 1 == LANES {
            s.push_str(&format!(
                "            default: {{ a{k} = vyre_combine(a{k}, v); }}\n"
            ));
        } else {
            s.push_str(&format!(
                "            case {k}u: {{ a{k} = vyre_combine(a{k}, v); }}\n"
            ));
        }
    }
    s.push_str(&format!("        }}\n        i += {WORKGROUP}u;\n    }}\n"));
    let mut terms: Vec<String> = (0..LANES).map(|k| format!("a{k}")).collect();
    while terms.len() > 1 {
        terms = terms
            .chunks(2)
            .map(|c| match c {
                [x, y] => format!("vyre_combine({x}, {y})"),
                [x] => x.clone(),
                _ => String::new(),
            })
            .collect();
    }
    let top = terms.concat();
    s.push_str(&format!("    let acc = {top};\n"));
    s
}

/// A scan level: segment `w` of `src` scanned into `dst`, starting from
/// `offs[w]` when `offsets`, else from the identity.
///
/// Each tile of [`SCAN_TILE`] elements is 512 *quads* of 4 consecutive
/// elements; invocation `lid` owns quads `lid` and `256 + lid`, so that
/// its loads and stores of whole quads are coalesced. Each quad is
/// combined from the identity in order, a Hillis-Steele scan combines the
/// 512 quad totals, and each element is the carry, the earlier quads and
/// its own quad's elements, combined in that fixed order whatever path
/// the elements take ([`QuadIo`]): fused and unfused give the same bits.
pub fn scan_kernel(
    op: ReduceOp,
    ty: &str,
    kind: ReduceKind,
    segment: Segment,
    offsets: bool,
    src: &Source,
) -> String {
    let mut s = prelude(op, ty, &format!("scan {}", op.name()));
    s.push_str(&src.text(ty));
    let b = src.next_binding;
    if offsets {
        s.push_str(&format!(
            "@group(0) @binding({b}) var<storage, read> vyre_offs: array<{ty}>;\n"
        ));
    }
    let b = b + 1;
    let io = QuadIo::of(src, segment);
    s.push_str(&format!(
        "@group(0) @binding({b}) var<storage, read_write> vyre_dst: array<{ty}>;\n"
    ));
    if io != QuadIo::Tile {
        s.push_str(&format!(
            "@group(0) @binding({}) var<storage, read> vyre_src4: array<vec4<{ty}>>;\n",
            b + 1
        ));
    }
    if io == QuadIo::Registers {
        s.push_str(&format!(
            "@group(0) @binding({}) var<storage, read_write> vyre_dst4: array<vec4<{ty}>>;\n",
            b + 2
        ));
    } else {
        s.push_str(&format!(
            "var<workgroup> tile: array<{ty}, {PADDED_TILE}>;\n"
        ));
    }
    s.push_str(&format!(
        "var<workgroup> sums: array<{ty}, {}>;\n\n@compute @workgroup_size({WORKGROUP})\nfn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {{\n",
        2 * WORKGROUP
    ));
    s.push_str(&bounds(segment, src));
    s.push_str("    var carry = vyre_identity();\n");
    if offsets {
        s.push_str("    if w < arrayLength(&vyre_offs) { carry = vyre_offs[w]; }\n");
    }
    s.push_str(&format!(
        "    for (var base = start; base < end; base += {SCAN_TILE}u) {{\n        // This invocation's quads: elements ea.. and eb.. of the tile.\n        let ea = base + 4u * lid.x;\n        let eb = ea + {}u;\n        var va = vec4<{ty}>(vyre_identity());\n        var vb = va;\n",
        4 * WORKGROUP
    ));
    s.push_str(&io.loads());
    s.push_str(&quad_scan(kind == ReduceKind::Exclusive));
    s.push_str(&io.stores());
    s.push_str(&format!(
        "        carry = vyre_combine(carry, sums[{}u]);\n        workgroupBarrier();\n    }}\n}}\n",
        2 * WORKGROUP - 1
    ));
    s
}

/// How a scan's quads come and go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum QuadIo {
    /// Coalesced loads of single elements into workgroup memory (a source
    /// fused on read, or segments that are not whole quads), stores
    /// through it.
    Tile,
    /// Whole quads from `vyre_src4`; stores through workgroup memory, one
    /// element each (a consumer fused on write reads those stores).
    Vectors,
    /// Whole quads from `vyre_src4` and to `vyre_dst4`, no workgroup
    /// memory but the totals.
    Registers,
}

impl QuadIo {
    fn of(src: &Source, segment: Segment) -> QuadIo {
        let quads = src.vector && matches!(segment, Segment::Fixed(k) if k % 4 == 0);
        match (quads, src.store4) {
            (false, _) => QuadIo::Tile,
            (true, false) => QuadIo::Vectors,
            (true, true) => QuadIo::Registers,
        }
    }

    /// `va` and `vb` from the source (the identity past `end`).
    fn loads(self) -> String {
        match self {
            QuadIo::Tile => format!(
                "        for (var k = 0u; k < {per}u; k++) {{\n            let j = k * {WORKGROUP}u + lid.x;\n            var v = vyre_identity();\n            if base + j < end {{ v = vyre_load(base + j); }}\n            tile[j + (j >> 5u)] = v;\n        }}\n        workgroupBarrier();\n{}",
                quad_lanes(|q, e, lane| format!(
                    "        {{ let j = {e}u + 4u * lid.x; v{q}.{lane} = tile[j + (j >> 5u)]; }}\n"
                )),
                per = SCAN_TILE / WORKGROUP
            ),
            QuadIo::Vectors | QuadIo::Registers => ["a", "b"]
                .map(|q| {
                    format!(
                        "        if e{q} < end && end - e{q} > 3u {{\n            v{q} = vyre_src4[e{q} / 4u];\n        }} else {{\n            if e{q} < end {{ v{q}.x = vyre_load(e{q}); }}\n            if e{q} + 1u < end {{ v{q}.y = vyre_load(e{q} + 1u); }}\n            if e{q} + 2u < end {{ v{q}.z = vyre_load(e{q} + 2u); }}\n        }}\n"
                    )
                })
                .concat(),
        }
    }

    /// `oa` and `ob` to the destination.
    fn stores(self) -> String {
        match self {
            QuadIo::Tile | QuadIo::Vectors => format!(
                "        workgroupBarrier();\n{}        workgroupBarrier();\n        for (var k = 0u; k < {per}u; k++) {{\n            let j = k * {WORKGROUP}u + lid.x;\n            if base + j < end {{ vyre_dst[base + j] = tile[j + (j >> 5u)]; }}\n        }}\n",
                quad_lanes(|q, e, lane| format!(
                    "        {{ let j = {e}u + 4u * lid.x; tile[j + (j >> 5u)] = o{q}.{lane}; }}\n"
                )),
                per = SCAN_TILE / WORKGROUP
            ),
            QuadIo::Registers => ["a", "b"]
                .map(|q| {
                    format!(
                        "        if e{q} < end && end - e{q} > 3u {{\n            vyre_dst4[e{q} / 4u] = o{q};\n        }} else {{\n            if e{q} < end {{ vyre_dst[e{q}] = o{q}.x; }}\n            if e{q} + 1u < end {{ vyre_dst[e{q} + 1u] = o{q}.y; }}\n            if e{q} + 2u < end {{ vyre_dst[e{q} + 2u] = o{q}.z; }}\n        }}\n"
                    )
                })
                .concat(),
        }
    }
}

/// `f(quad, lane, e)` for each element of quads `a` (`va`, `oa`) and `b`,
/// concatenated: the element is `e + 4 * lid` of the tile.
fn quad_lanes(f: impl Fn(&str, u64, &str) -> String) -> String {
    [("a", 0), ("b", 4 * WORKGROUP)]
        .iter()
        .flat_map(|&(q, first)| {
            ["x", "y", "z", "w"]
                .iter()
                .zip(0u64..)
                .map(move |(&lane, c)| (q, first + c, lane))
        })
        .map(|(q, e, lane)| f(q, e, lane))
        .collect()
}

/// From `va`, `vb`: each quad combined from the identity (`ra`, `rb`), the
/// 512 quad totals scanned in `sums`, and the outputs `oa`, `ob`.
fn quad_scan(exclusive: bool) -> String {
    let mut s = String::new();
    for q in ["a", "b"] {
        s.push_str(&format!(
            "        var r{q} = v{q};\n        r{q}.x = vyre_combine(vyre_identity(), v{q}.x);\n        r{q}.y = vyre_combine(r{q}.x, v{q}.y);\n        r{q}.z = vyre_combine(r{q}.y, v{q}.z);\n        r{q}.w = vyre_combine(r{q}.z, v{q}.w);\n"
        ));
    }
    s.push_str(&format!(
        "        sums[lid.x] = ra.w;\n        sums[{w}u + lid.x] = rb.w;\n        workgroupBarrier();\n        for (var d = 1u; d < {all}u; d <<= 1u) {{\n            var ta = sums[lid.x];\n            if lid.x >= d {{ ta = vyre_combine(sums[lid.x - d], ta); }}\n            let tb = vyre_combine(sums[{w}u + lid.x - d], sums[{w}u + lid.x]);\n            workgroupBarrier();\n            sums[lid.x] = ta;\n            sums[{w}u + lid.x] = tb;\n            workgroupBarrier();\n        }}\n        var pa = carry;\n        if lid.x > 0u {{ pa = vyre_combine(carry, sums[lid.x - 1u]); }}\n        let pb = vyre_combine(carry, sums[{}u + lid.x]);\n",
        WORKGROUP - 1,
        w = WORKGROUP,
        all = 2 * WORKGROUP
    ));
    for q in ["a", "b"] {
        let lanes = if exclusive {
            format!(
                "p{q}, vyre_combine(p{q}, r{q}.x), vyre_combine(p{q}, r{q}.y), vyre_combine(p{q}, r{q}.z)"
            )
        } else {
            ["x", "y", "z", "w"]
                .map(|l| format!("vyre_combine(p{q}, r{q}.{l})"))
                .join(", ")
        };
        s.push_str(&format!("        let o{q} = vec4({lanes});\n"));
    }
    s
}

/// A generated kernel, to be written for a given [`Source`].
#[derive(Clone, Copy, Debug)]
pub enum Generated {
    /// [`reduce_kernel`].
    Reduce(ReduceOp, &'static str, Segment),
    /// [`scan_kernel`], with offsets or not.
    Scan(ReduceOp, &'static str, ReduceKind, Segment, bool),
}

impl Generated {
    /// The kernel's WGSL reading from `src`.
    pub fn wgsl(self, src: &Source) -> String {
        let text = match self {
            Generated::Reduce(op, ty, seg) => reduce_kernel(op, ty, seg, src),
            Generated::Scan(op, ty, kind, seg, offs) => scan_kernel(op, ty, kind, seg, offs, src),
        };
        let text = if src.subgroups {
            format!(
                "// The graph declares `features [subgroups]`: subgroup operations are allowed here.\n{text}"
            )
        } else {
            text
        };
        hoist_enables(&text, self.ty())
    }

    /// The element type.
    pub fn ty(self) -> &'static str {
        match self {
            Generated::Reduce(_, ty, _) | Generated::Scan(_, ty, ..) => ty,
        }
    }
}
