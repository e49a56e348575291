//! The example `mpi_batch` under `mpirun` on this machine (loopback only):
//! 1, 2 and 4 ranks checked against the CPU, and every failure a rank can
//! have (it exits, panics, stops answering, or its engine refuses its
//! share) ending every rank within a bounded time, with the rank named.
//!
//! Needs Open MPI (`mpirun`) and a GPU adapter in each rank (lavapipe
//! here); `cargo test` builds the example beside this test's binary.

use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One job at a time: four lavapipe ranks already share two cores.
static ONE_JOB: Mutex<()> = Mutex::new(());

/// The bound on any job, failures included.
const BOUND: Duration = Duration::from_secs(60);

struct Job {
    code: Option<i32>,
    output: String,
    took: Duration,
}

/// Runs the example on `ranks` ranks with `args`, under `timeout` (Debian's
/// mpirun can hang in its own shutdown after a failed rank).
fn mpirun(ranks: usize, args: &[&str]) -> Job {
    let _one = ONE_JOB
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let exe = std::env::current_exe().expect("the test's own path");
    let example = exe
        .parent()
        .and_then(|deps| deps.parent())
        .map(|dir| dir.join("examples").join("mpi_batch"))
        .expect("the target directory");
    assert!(
        example.exists(),
        "{} is missing: `cargo test` builds it (or run `cargo build --example mpi_batch` in vyre-mpi)",
        example.display()
    );
    let xdg = std::env::var("XDG_RUNTIME_DIR").unwrap_or_else(|_| "/tmp/vyre-xdg".into());
    std::fs::create_dir_all(&xdg).expect("XDG_RUNTIME_DIR");
    let start = Instant::now();
    let out = Command::new("timeout")
        .args([
            "-k",
            "5",
            "120",
            "mpirun",
            "--allow-run-as-root",
            "--oversubscribe",
        ])
        .args([
            "--mca",
            "btl_tcp_if_include",
            "lo",
            "--mca",
            "oob_tcp_if_include",
            "lo",
        ])
        .args(["-np", &ranks.to_string()])
        .arg(&example)
        .args(args)
        .env("XDG_RUNTIME_DIR", &xdg)
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("mpirun (install openmpi-bin: apt-get install openmpi-bin libopenmpi-dev)");
    let output = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Job {
        code: out.status.code(),
        output,
        took: start.elapsed(),
    }
}

/// The job failed (any non-zero code: mpirun's own varies) within the bound.
fn assert_failed_in_time(job: &Job) {
    assert_ne!(job.code, Some(0), "the job should fail:\n{}", job.output);
    assert_ne!(
        job.code,
        Some(124),
        "the job hung until `timeout`:\n{}",
        job.output
    );
    assert!(
        job.took < BOUND,
        "the job took {:?}:\n{}",
        job.took,
        job.output
    );
}

#[test]
fn one_two_and_four_ranks_check_every_instance_against_the_cpu() {
    for ranks in [1, 2, 4] {
        let job = mpirun(ranks, &["--quick"]);
        assert_eq!(job.code, Some(0), "{ranks} rank(s):\n{}", job.output);
        assert!(
            job.output
                .contains("checked 8 instances against the CPU on every batch"),
            "{ranks} rank(s):\n{}",
            job.output
        );
        for rank in 0..ranks {
            assert!(
                job.output.contains(&format!("rank {rank} (")),
                "rank {rank} of {ranks} did not report:\n{}",
                job.output
            );
        }
        assert!(job.took < BOUND, "{ranks} rank(s) took {:?}", job.took);
    }
    // More instances than one rank's share, uneven sizes, more batches.
    // The untyped API, into slices.
    let job = mpirun(
        2,
        &[
            "--instances",
            "13",
            "--size",
            "3001",
            "--batches",
            "4",
            "--sinks",
            "host",
        ],
    );
    assert_eq!(job.code, Some(0), "{}", job.output);
    assert!(
        job.output.contains("checked 13 instances"),
        "{}",
        job.output
    );
}

/// Outputs read into vectors (what `graph!`'s typed `run_batch` gives) and
/// into `Headed` vectors (a header, then the elements) spread over the
/// ranks like slices: every instance checked, header included, and the
/// batch's report names more than one rank.
#[test]
fn vector_and_headed_sinks_spread_over_two_and_four_ranks() {
    for sinks in ["vector", "headed"] {
        for ranks in [2, 4] {
            let job = mpirun(ranks, &["--quick", "--sinks", sinks]);
            let what = format!("--sinks {sinks} on {ranks} ranks");
            assert_eq!(job.code, Some(0), "{what}:\n{}", job.output);
            assert!(
                job.output
                    .contains("checked 8 instances against the CPU on every batch"),
                "{what}:\n{}",
                job.output
            );
            // The batches after the first (the first is split equally).
            for b in 2..=3 {
                let named = job
                    .output
                    .lines()
                    .find_map(|l| {
                        l.strip_prefix(&format!("batch {b}: the report's runs name ranks "))
                    })
                    .unwrap_or_else(|| panic!("{what}: no ranks for batch {b}:\n{}", job.output));
                let named: Vec<&str> = named.trim_matches(['[', ']']).split(", ").collect();
                assert!(named.len() > 1, "{what}: batch {b} ran on {named:?} only");
                assert!(
                    !named.contains(&"18446744073709551615"),
                    "{what}: a failed run"
                );
            }
        }
    }
}

/// The typed API (`Poly::with_engine(cluster)`, the example's default):
/// its batches spread, and a rank's failure arrives on every rank as
/// `BackendError::RankFailed`, after which the same graph runs again.
#[test]
fn the_typed_api_spreads_and_fails_with_the_rank_named() {
    let job = mpirun(4, &["--quick"]);
    assert_eq!(job.code, Some(0), "{}", job.output);
    for b in 2..=3 {
        let line = format!("batch {b}: the typed batch ran on ranks [0, ");
        assert!(job.output.contains(&line), "batch {b}:\n{}", job.output);
    }
    let job = mpirun(4, &["--quick", "--fail-rank", "2"]);
    assert_eq!(job.code.map(|c| c != 0), Some(true), "{}", job.output);
    assert!(job.took < BOUND, "took {:?}", job.took);
    for rank in 0..4 {
        let line = format!("rank {rank}: batch 1 failed: rank 2 of the MPI job failed: instance ");
        assert!(job.output.contains(&line), "rank {rank}:\n{}", job.output);
    }
    assert!(
        job.output
            .contains("the batch after the failure ran; checked 8 instances against the CPU"),
        "{}",
        job.output
    );
    let job = mpirun(2, &["--quick", "--member-batch", "1"]);
    assert_eq!(job.code.map(|c| c != 0), Some(true), "{}", job.output);
    for rank in 0..2 {
        let line = format!(
            "rank {rank}: batch 1 failed: rank 1 of the MPI job failed: it passed 1 instance(s)"
        );
        assert!(job.output.contains(&line), "rank {rank}:\n{}", job.output);
    }
}

/// Vectors of `u64` for outputs of an odd number of `u32`s: the batch
/// fails on every rank with the sink's own error, and the next batch (into
/// vectors that fit) runs.
#[test]
fn vectors_that_do_not_fit_fail_the_batch_on_every_rank() {
    let job = mpirun(4, &["--quick", "--sinks", "wide"]);
    assert_eq!(job.code.map(|c| c != 0), Some(true), "{}", job.output);
    assert!(job.took < BOUND, "took {:?}", job.took);
    for rank in 0..4 {
        let failed = job.output.lines().any(|l| {
            l.starts_with(&format!("rank {rank}: batch 1 failed: "))
                && l.contains("not a whole number of the vector's 8-byte elements")
        });
        assert!(failed, "rank {rank}:\n{}", job.output);
    }
    assert!(
        job.output
            .contains("the batch after the failure ran; checked 8 instances against the CPU"),
        "{}",
        job.output
    );
}

#[test]
fn a_rank_that_exits_mid_batch_ends_the_job_naming_it() {
    let job = mpirun(4, &["--quick", "--exit-rank", "2"]);
    assert_failed_in_time(&job);
    assert!(job.output.contains("rank 2 exits"), "{}", job.output);
    // mpirun's own report names the process: [[job,1],2].
    assert!(job.output.contains(",2]"), "{}", job.output);
}

#[test]
fn a_rank_that_panics_ends_the_job_instead_of_hanging_it() {
    let job = mpirun(4, &["--quick", "--panic-rank", "1"]);
    assert_failed_in_time(&job);
    assert!(
        job.output
            .contains("rank 1 panics in the middle of the batch"),
        "{}",
        job.output
    );
    assert!(
        job.output
            .contains("vyre-mpi: rank 1 panicked; ending the job"),
        "{}",
        job.output
    );
}

#[test]
fn a_rank_whose_engine_fails_fails_the_batch_on_every_rank_then_the_next_batch_runs() {
    let job = mpirun(4, &["--quick", "--fail-rank", "3", "--sinks", "host"]);
    assert_eq!(job.code.map(|c| c != 0), Some(true), "{}", job.output);
    assert!(job.took < BOUND, "took {:?}", job.took);
    for rank in 0..4 {
        let line =
            format!("rank {rank}: batch 1 failed: rank 3 failed its share of the batch: instance ");
        assert!(
            job.output.contains(&line),
            "rank {rank} did not fail naming rank 3:\n{}",
            job.output
        );
    }
    // The same failure through the Engine API (the typed API's error).
    for rank in 0..4 {
        let line =
            format!("rank {rank}: through the Engine API: rank 3 of the MPI job failed: instance ");
        assert!(job.output.contains(&line), "rank {rank}:\n{}", job.output);
    }
    assert!(
        job.output
            .contains("is 6499 bytes, not a multiple of its 4-byte element")
            || job.output.contains("bytes, not a multiple"),
        "{}",
        job.output
    );
    assert!(
        job.output
            .contains("the batch after the failure ran; checked 8 instances against the CPU"),
        "{}",
        job.output
    );
}

#[test]
fn a_rank_that_stops_answering_is_named_when_the_timeout_runs_out() {
    let job = mpirun(4, &["--quick", "--stall-rank", "2", "--timeout", "5"]);
    assert_failed_in_time(&job);
    assert!(
        job.took >= Duration::from_secs(5),
        "ended before the timeout: {:?}",
        job.took
    );
    assert!(
        job.output
            .contains("vyre-mpi: rank 0: rank(s) 2 did not send its results within 5s"),
        "{}",
        job.output
    );
}

#[test]
fn a_batch_passed_on_another_rank_than_zero_fails_on_every_rank_naming_it() {
    let job = mpirun(2, &["--quick", "--member-batch", "1", "--sinks", "host"]);
    assert_eq!(job.code.map(|c| c != 0), Some(true), "{}", job.output);
    assert!(job.took < BOUND, "took {:?}", job.took);
    for rank in 0..2 {
        let line = format!(
            "rank {rank}: batch 1 failed: rank 1 passed 1 instance(s) to the batch, but only rank 0's"
        );
        assert!(job.output.contains(&line), "rank {rank}:\n{}", job.output);
        let line = format!(
            "rank {rank}: through the Engine API: rank 1 of the MPI job failed: it passed 1 instance(s)"
        );
        assert!(job.output.contains(&line), "rank {rank}:\n{}", job.output);
    }
    assert!(
        job.output
            .contains("the batch after the failure ran; checked 8 instances"),
        "{}",
        job.output
    );
}
