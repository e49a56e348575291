//! Scale-out of vyre graph batches over the processes (and machines) of
//! an MPI job, through the `mpi` crate on Open MPI (or any MPI 3.1).
//!
//! - [`init`] starts MPI and installs a panic hook that ends the whole job
//!   when any rank panics (an unwinding rank would leave the others
//!   waiting for ever).
//! - [`Cluster`] is an [`Engine`](vyre_graph::Engine) over every rank: rank
//!   0's batch is split by each rank's measured throughput, each rank runs
//!   its share on its own local engine (a [`Graph`](vyre_graph::Graph) on
//!   its GPU), and the results come back to rank 0 in order. A failure on
//!   any rank fails the batch on every rank with an [`MpiError`] naming the
//!   rank and the cause; every wait is bounded ([`ClusterOptions::timeout`]).
//!
//! This crate is outside vyre's workspace so that nobody needs MPI to
//! build vyre: it needs an MPI library and libclang (`apt-get install
//! openmpi-bin libopenmpi-dev libclang-dev` on Debian). docs/mpi.md in the
//! repository is the guide; `examples/mpi_batch.rs` runs with `mpirun -np 4`.
//!
//! ```no_run
//! use vyre_graph::{DispatchConfig, Engine, Gpu, Graph};
//! # fn f(spec: vyre_graph::spec::GraphSpec) -> Result<(), Box<dyn std::error::Error>> {
//! let universe = vyre_mpi::init()?;
//! let cluster = vyre_mpi::Cluster::new(&universe, Graph::new(&Gpu::new()?, spec)?);
//! let mut batch = Vec::new(); // rank 0 fills it; every other rank leaves it empty
//! cluster.run_batch(&DispatchConfig::default(), &mut batch)?;
//! # Ok(()) }
//! ```

mod cluster;
mod error;
mod link;
mod member;
mod root;
mod shares;
mod wire;

pub use cluster::{Cluster, ClusterOptions, ClusterReport, Fault, ShareReport};
pub use error::MpiError;
pub use link::TIMEOUT_EXIT_CODE;
pub use mpi;

use mpi::topology::{Communicator, SimpleCommunicator};

/// The exit code of a job ended because a rank panicked.
pub const PANIC_EXIT_CODE: i32 = 101;

/// Starts MPI (once per process) and installs the panic hook: a rank that
/// panics prints its panic as usual (the previous hook) and then ends the
/// whole job with `MPI_Abort` ([`PANIC_EXIT_CODE`]), where an unwinding
/// rank would otherwise leave every other rank waiting for it. Keep the
/// returned `Universe` until the end of `main`: dropping it finalises MPI.
///
/// # Errors
/// [`MpiError::AlreadyInitialised`] when MPI was started already in this
/// process.
pub fn init() -> Result<mpi::environment::Universe, MpiError> {
    let universe = mpi::initialize().ok_or(MpiError::AlreadyInitialised)?;
    install_panic_hook();
    Ok(universe)
}

/// The hook [`init`] installs (once, whatever the number of calls).
fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            previous(info);
            if mpi::environment::is_initialized() && !mpi::environment::is_finalized() {
                let world = SimpleCommunicator::world();
                link::say(&format!(
                    "vyre-mpi: rank {} panicked; ending the job (MPI_Abort, exit code {PANIC_EXIT_CODE}) so that the other ranks do not wait for it",
                    world.rank()
                ));
                world.abort(PANIC_EXIT_CODE);
            }
        }));
    });
}
