//! Shared by the benchmarks: the collc binary's allocator (src/main.rs), so the figures are the
//! binary's, and the allreduce models most of them time.

use collc::diag::{FileId, Span};
use collc::sema::model::{
    AutoOr, Collective, CollectiveKind, Dtype, Family, Model, ReduceOp, Schedule, Stage,
};
use std::collections::BTreeMap;

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A sum allreduce of `count` elements of `dtype` on ranks 0..n, scheduled by `family`, with no
/// topology, cost model or target.
pub fn allreduce(n: usize, count: u64, dtype: Dtype, family: Family) -> Model {
    let span = Span::new(FileId(0), 0, 0);
    Model {
        topology: None,
        collective: Some(Collective {
            kind: CollectiveKind::Allreduce,
            ranks: (0..n).collect(),
            count,
            dtype,
            op: ReduceOp::Sum,
            root: None,
            span,
        }),
        schedule: Some(Schedule { family, span }),
        models: Vec::new(),
        targets: Vec::new(),
        params: BTreeMap::new(),
    }
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
