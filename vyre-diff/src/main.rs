//! `vyre-diff`: checks the cases of this build, once or, with `--soak
//! SECONDS`, in rounds (new inputs and middle sizes each round) until the
//! time is up, printing a line of figures per round. Exits non-zero when
//! any case differs, after printing each failure with its graph.
//! `--candidates` prints each case's shrinking edits instead.

use std::time::{Duration, Instant};

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let soak = args
        .iter()
        .position(|a| a == "--soak")
        .and_then(|i| args.get(i + 1)?.parse::<u64>().ok());
    if args.iter().any(|a| a == "--candidates") {
        for (case, edits) in vyre_diff::CANDIDATES {
            println!("{case}: {}", edits.join(" "));
        }
        return;
    }
    let gpu = match vyre_graph::Gpu::new() {
        Ok(gpu) => gpu,
        Err(e) => {
            eprintln!("vyre-diff: no GPU: {e}");
            std::process::exit(2);
        }
    };
    println!("adapter: {}", gpu.adapter().name);
    let mut ctx = vyre_diff::Ctx::new(gpu);
    let start = Instant::now();
    let end = start + Duration::from_secs(soak.unwrap_or(0));
    loop {
        vyre_diff::check_all(&mut ctx);
        let c = ctx.gpu().counters();
        println!(
            "round {} t={:.1}s graphs={} runs={} failures={} rss_kib={} live_buffer_bytes={}",
            ctx.round,
            start.elapsed().as_secs_f64(),
            ctx.graphs,
            ctx.runs,
            ctx.failures.len(),
            rss_kib(),
            c.live_buffer_bytes
        );
        ctx.round += 1;
        if Instant::now() >= end {
            break;
        }
    }
    let mut shown = std::collections::HashSet::new();
    for f in &ctx.failures {
        println!("FAIL {f}");
        if shown.insert(f.case) {
            println!("--- graph of case {} ---\n{}---", f.case, f.source);
        }
    }
    let failed: std::collections::BTreeSet<&str> = ctx.failures.iter().map(|f| f.case).collect();
    println!(
        "{} case checks over {} rounds, {} cases with differences",
        ctx.graphs,
        ctx.round,
        failed.len()
    );
    if ctx.skipped > 0 {
        println!(
            "{} case checks not compared on GL: a remainder of i32s, which naga 30's GLSL writer leaves to GLSL (undefined for a negative operand)",
            ctx.skipped
        );
    }
    if !failed.is_empty() {
        println!(
            "failing cases: {}",
            failed.into_iter().collect::<Vec<_>>().join(" ")
        );
        std::process::exit(1);
    }
}
