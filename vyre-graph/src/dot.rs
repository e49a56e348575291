//! `Graph::to_dot`: a graph's schedule as a Graphviz picture. Kernels are
//! boxes (with their level and, once profiled, their GPU time), buffers are
//! ellipses coloured by class (inputs blue, outputs green, inouts yellow,
//! uniforms grey, append buffers as cylinders, textures as 3-D boxes) and
//! say which device slot they share with others (aliasing); fused groups
//! and self-stopping loops are clusters, a loop drawn as its first
//! iteration alone (the others are the same nodes again), and so is a
//! `repeat`'s unrolled body (nodes `label[0]` .. `label[K - 1]`). Reads and writes
//! are solid arrows; dependencies no buffer arrow shows (write-after-read,
//! write-after-write, reuse of aliased memory) dashed.
//!
//! Beside `describe.rs`: it reads a compiled [`Program`] and imports only
//! `plan/` and `spec/`.

use std::fmt::Write as _;

use vyre_analysis::{Hazard, Use};

use crate::plan::program::Program;
use crate::plan::validate::node_uses;
use crate::spec::BufferClass;

/// `text` inside a DOT string.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// `base[k]`: the label of a `repeat` body's node in iteration `k`.
fn repeated(label: &str) -> Option<(&str, usize)> {
    let (base, rest) = label.rsplit_once('[')?;
    let k = rest.strip_suffix(']')?.parse().ok()?;
    Some((base, k))
}

/// Which nodes the picture shows (all but a loop's iterations after its
/// first, and a `repeat`'s copies after its first), and the `repeat`
/// count of each shown first copy (0: not repeated).
fn shown_nodes(program: &Program) -> (Vec<bool>, Vec<usize>) {
    let spec = &program.spec;
    let mut shown = vec![true; spec.nodes.len()];
    let mut in_loop = vec![false; spec.nodes.len()];
    for lp in spec.loops.iter() {
        for (i, it) in lp.iterations.iter().enumerate() {
            for n in it.first_node..it.first_node + it.nodes {
                if let (Some(s), Some(l)) = (shown.get_mut(n), in_loop.get_mut(n)) {
                    *s = i == 0;
                    *l = true;
                }
            }
        }
    }
    // `repeat K as i { .. }` unrolls into `label[0]` .. `label[K - 1]`.
    let mut copies = vec![0usize; spec.nodes.len()];
    for (n, node) in spec.nodes.iter().enumerate() {
        let Some((base, k)) = repeated(&node.label).filter(|_| !in_loop[n]) else {
            continue;
        };
        let first = spec
            .nodes
            .iter()
            .position(|m| repeated(&m.label) == Some((base, 0)));
        if let (Some(first), true) = (first, k > 0) {
            shown[n] = false;
            copies[first] = copies[first].max(k + 1);
        }
    }
    (shown, copies)
}

/// The schedule of `program` as DOT (see the module's docs), each node
/// labelled with its GPU time from `times` (empty: none).
pub(crate) fn to_dot(program: &Program, times: &[u64]) -> String {
    let spec = &program.spec;
    let a = &program.analysis;
    let (shown, copies) = shown_nodes(program);
    let uses: Vec<Vec<Use>> = spec.nodes.iter().map(|n| node_uses(spec, n)).collect();
    let mut used = vec![false; spec.buffers.len()];
    for (_, u) in uses.iter().enumerate().filter(|(n, _)| shown[*n]) {
        for u in u {
            if let Some(b) = used.get_mut(u.buffer) {
                *b = true;
            }
        }
    }
    let mut out = String::new();
    let _ = writeln!(out, "digraph \"{}\" {{", escape(&spec.name));
    out.push_str("    graph [fontname=\"Helvetica\", fontsize=11, nodesep=0.3, ranksep=0.35];\n");
    out.push_str("    node [fontname=\"Helvetica\", fontsize=11];\n");
    out.push_str("    edge [fontname=\"Helvetica\", fontsize=9, color=\"#555555\"];\n");
    write_buffers(&mut out, program, &used);
    for (i, n) in spec.nodes.iter().enumerate().filter(|(i, _)| shown[*i]) {
        let kernel = spec.kernels.get(n.kernel).map_or("?", |k| &*k.label);
        let mut label = format!("{}\n", n.label);
        if kernel != &*n.label {
            let _ = write!(label, "{kernel} · ");
        }
        let _ = write!(label, "level {}", a.levels.get(i).copied().unwrap_or(0));
        if let Some(ns) = times.get(i) {
            let _ = write!(label, "\n{:.1} µs", *ns as f64 / 1e3);
        }
        let _ = writeln!(
            out,
            "    n{i} [shape=box, style=\"rounded,filled\", fillcolor=\"#fff7e6\", label=\"{}\"];",
            escape(&label)
        );
    }
    for (n, u) in uses.iter().enumerate().filter(|(n, _)| shown[*n]) {
        for u in u {
            if u.access.reads() {
                let _ = writeln!(out, "    b{} -> n{n};", u.buffer);
            }
            if u.access.writes() {
                let _ = writeln!(out, "    n{n} -> b{};", u.buffer);
            }
        }
    }
    // Read-after-write is the buffer's own path; the others are not drawn.
    for e in &a.edges {
        let hidden = !shown.get(e.from).copied().unwrap_or(false)
            || !shown.get(e.to).copied().unwrap_or(false);
        if e.hazard == Hazard::ReadAfterWrite || hidden {
            continue;
        }
        let buffer = spec.buffers.get(e.buffer).map_or("?", |b| &*b.name);
        let _ = writeln!(
            out,
            "    n{} -> n{} [style=dashed, color=\"#999999\", fontcolor=\"#777777\", label=\"{} {}\"];",
            e.from,
            e.to,
            escape(buffer),
            e.hazard.short_name()
        );
    }
    write_clusters(&mut out, program, &shown, &copies);
    out.push_str("}\n");
    out
}

/// The buffers the shown nodes use: shape and colour by kind and class,
/// and the slot they share with other buffers, if any.
fn write_buffers(out: &mut String, program: &Program, used: &[bool]) {
    let spec = &program.spec;
    let slots = &program.analysis.slots;
    for (i, b) in spec.buffers.iter().enumerate() {
        if !used.get(i).copied().unwrap_or(false) {
            continue;
        }
        let (shape, colour) = match (b.class, b.append.is_some(), b.texture.is_some()) {
            (_, _, true) => ("box3d", class_colour(b.class)),
            (_, true, _) => ("cylinder", class_colour(b.class)),
            (class, ..) => ("ellipse", class_colour(class)),
        };
        let mut label = b.name.to_string();
        if b.append.is_some() {
            label.push_str("\nappend");
        }
        let slot = slots.get(i).copied().unwrap_or(i);
        let sharing: Vec<&str> = spec
            .buffers
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != i && slots.get(j).copied() == Some(slot))
            .map(|(_, other)| &*other.name)
            .collect();
        if !sharing.is_empty() {
            let _ = write!(label, "\nshares memory with {}", sharing.join(", "));
        }
        let _ = writeln!(
            out,
            "    b{i} [shape={shape}, style=filled, fillcolor=\"{colour}\", label=\"{}\"];",
            escape(&label)
        );
    }
}

fn class_colour(class: BufferClass) -> &'static str {
    match class {
        BufferClass::Input => "#dbeafe",
        BufferClass::Output => "#dcfce7",
        BufferClass::InOut => "#fef9c3",
        BufferClass::Uniform => "#eeeeee",
        BufferClass::Intermediate => "#ffffff",
    }
}

/// Fused groups (dashed) and loops (dotted, their first iteration) as
/// clusters around their nodes.
fn write_clusters(out: &mut String, program: &Program, shown: &[bool], copies: &[usize]) {
    let spec = &program.spec;
    let repeated: Vec<String> = (0..copies.len())
        .filter(|&n| copies[n] > 0)
        .map(|n| format!("n{n};"))
        .collect();
    if let Some(k) = copies.iter().copied().max().filter(|&k| k > 0) {
        let _ = writeln!(
            out,
            "    subgraph cluster_repeat {{ label=\"repeat: {k} times (the first shown)\"; style=dotted; penwidth=1.5; {} }}",
            repeated.join(" ")
        );
    }
    for (g, group) in spec.fused.iter().enumerate() {
        let members: Vec<String> = group
            .nodes
            .iter()
            .filter(|&&n| shown.get(n).copied().unwrap_or(false))
            .map(|n| format!("n{n};"))
            .collect();
        if members.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "    subgraph cluster_fused{g} {{ label=\"{} ({} nodes, one dispatch)\"; style=dashed; color=\"#b45309\"; {} }}",
            escape(&group.dispatch.label),
            group.nodes.len(),
            members.join(" ")
        );
    }
    for (l, lp) in spec.loops.iter().enumerate() {
        let Some(first) = lp.iterations.first() else {
            continue;
        };
        let members: Vec<String> = (first.first_node..first.first_node + first.nodes)
            .map(|n| format!("n{n};"))
            .collect();
        let _ = writeln!(
            out,
            "    subgraph cluster_loop{l} {{ label=\"{}: up to {} iterations (the first shown), stops on the device\"; style=dotted; penwidth=1.5; {} }}",
            escape(&lp.label),
            lp.iterations.len(),
            members.join(" ")
        );
    }
}
