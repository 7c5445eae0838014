//! Shared by the benchmarks: the collc binary's allocator (src/main.rs), so the figures are the
//! binary's, and the allreduce models most of them time.

use collc::sema::model::{AutoOr, CollectiveKind, Dtype, Family, Model, ReduceOp, Stage};

/// Timing the binary as a user runs it (the benchmarks of whole commands).
#[allow(dead_code)]
pub mod process;

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A sum allreduce of `count` elements of `dtype` on ranks 0..n, scheduled by `family`, with no
/// topology, cost model or target.
#[allow(dead_code)]
pub fn allreduce(n: usize, count: u64, dtype: Dtype, family: Family) -> Model {
    Model::bare(
        CollectiveKind::Allreduce,
        n,
        count,
        dtype,
        ReduceOp::Sum,
        None,
        family,
    )
}

/// Recursive multiplying with `[a4 x log4 n]` (n a power of four).
#[allow(dead_code)]
pub fn rm_a4(n: usize) -> Family {
    Family::RecursiveMultiplying {
        stages: AutoOr::Fixed(vec![
            Stage::Factor { base: 4 };
            n.trailing_zeros() as usize / 2
        ]),
        model: None,
    }
}
