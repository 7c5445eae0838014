//! Backends: turn a verified [`crate::ir::Program`] into what real systems run. Each backend
//! validates what it emits against its consumer's rules and returns a coded error instead of a
//! file the consumer would reject or hang on. Output is deterministic.
//!
//! - [`goal`]: GOAL text for LogGOPSim (and ATLAHS/htsim), plus collc's own GOAL reader, which
//!   the simulator ([`crate::sim`]) runs.
//! - [`mpi`]: a Cargo project that runs the schedule with point-to-point MPI (the `mpi` crate)
//!   and checks itself against the MPI library's own collective.
//! - [`msccl`]: MSCCL XML for NCCL/RCCL with msccl-executor-nccl, its reader, rules and
//!   symbolic execution.
//! - [`p4`]: a P4_16 switch program, its P4Info and every switch's table entries for an
//!   in-network schedule.

pub mod goal;
pub mod mpi;
pub mod msccl;
pub mod p4;
