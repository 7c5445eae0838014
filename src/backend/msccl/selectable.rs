//! Selectable by construction: the chunk count and size window an XML is built with, so that
//! the runtime picks it at the sizes people call.
//!
//! The executor runs an XML for a call only when the call's `count` (per rank for allgather
//! and reduce-scatter, per peer for all-to-all; RCCL: `count * sizeMultiplier`, which this
//! implies) is a multiple of `nchunksperloop` and `minBytes <= nBytes <= maxBytes`
//! ([`super::select`]). Frameworks and nccl-tests call power-of-two sizes (nccl-tests: 8 B
//! doubling; its count is `bytes / typesize`, divided by the rank count and rounded down for
//! allgather, reduce-scatter and all-to-all), so an `nchunksperloop` with an odd factor (a
//! forest's `k` trees per rank times its chunks times the ranks: 7 x 37 x 16 = 4144 on two DGX
//! A100 boxes) is skipped at every one of them and NCCL silently runs its own algorithm.
//!
//! [`plan`] chooses the chunks per part to build with: the program's own count when that is
//! selectable, otherwise a finer count (the program is refined, [`crate::ir::refine`]: every
//! chunk becomes one or more whole new chunks) among its multiples (no loss) and the powers of
//! two up to 64 times it, keeping those that lose at most [`MAX_LOSS`] of the bandwidth to
//! unequal chunks, and of them the one selected at the declared size and from the smallest
//! nccl-tests size on, then the fewest chunks that lose at most 1%, then the fewest (fewer
//! chunks fit the executor's steps, offsets and nodes better). The XML's `minBytes` becomes that first size
//! when the file set none (the XML then claims only sizes at which it runs); a window set by
//! the file or `--size-windows` is raised to it, and the sizes left to NCCL are named in an
//! E0054 warning, as is a declared size no count makes selectable.

use super::select::{bytes_fit, call_count, count_fits};
use super::{CollectiveKind, size_multiplier};
use crate::compare::sizes::show;
use crate::diag::{Code, Diagnostic, Span};
use crate::ir::Program;
use crate::ir::refine::load_growth;
use num_rational::Ratio;

/// The largest share of the bandwidth a refinement may cost before a coarser choice (which
/// starts at a larger size) is taken instead: 5%.
pub const MAX_LOSS: (u64, u64) = (1, 20);

/// The top of an open window (`maxBytes = 0`) for naming sizes: nccl-tests' usual `-e 1G`, or
/// the declared size when larger.
pub const OPEN_TOP: u64 = 1 << 30;

/// The element count `count * sizeMultiplier` (the whole buffer) of nccl-tests' call of
/// `bytes` bytes.
pub fn tests_elements(kind: CollectiveKind, ranks: u64, type_bytes: u64, bytes: u64) -> u64 {
    let per = bytes / type_bytes.max(1);
    call_count(kind, per, ranks) * size_multiplier(kind, ranks)
}

/// nccl-tests' sizes (8 B doubling) from `lo` to `top`, both included when they are sizes.
pub fn tests_sizes(lo: u64, top: u64) -> Vec<u64> {
    let mut out = Vec::new();
    let mut s = 8u64;
    while s <= top {
        if s >= lo {
            out.push(s);
        }
        match s.checked_mul(2) {
            Some(n) => s = n,
            None => break,
        }
    }
    out
}

/// What to build an XML with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The program's chunks per part, and the chunks per part to build with.
    pub from: u32,
    pub cpp: u32,
    /// At most this share of the model's bandwidth is lost to unequal chunks.
    pub loss: Ratio<u64>,
    /// The `minBytes` to write.
    pub min_bytes: u64,
    /// nccl-tests sizes inside the asked-for window at which the runtime does not pick the XML.
    pub skipped: Vec<u64>,
    /// Bytes of the declared call, and whether the runtime picks the XML for it.
    pub declared: u64,
    pub declared_selected: bool,
}

/// The choices for a program of `spec` built with `instances` and the window `min_bytes ..
/// max_bytes` (0: none set), best first (see the module doc); the caller takes the first the
/// executor can run.
pub fn plan(prog: &Program, instances: u32, min_bytes: u64, max_bytes: u64) -> Vec<Plan> {
    let spec = &prog.spec;
    let n = u64::from(spec.ranks);
    let parts = u64::from(spec.input_parts().max(spec.output_parts()));
    let ts = spec.dtype.bytes();
    let cpp = spec.chunks_per_part.max(1);
    let mult = size_multiplier(spec.kind, n);
    let declared_elems = spec.part_elements * parts;
    let declared = declared_elems * ts;
    let top = if max_bytes == 0 {
        OPEN_TOP.max(declared)
    } else {
        max_bytes
    };
    let window: Vec<(u64, u64)> = tests_sizes(min_bytes, top)
        .into_iter()
        .map(|s| (s, tests_elements(spec.kind, n, ts, s)))
        .filter(|&(_, e)| e > 0 && e * ts >= min_bytes && (max_bytes == 0 || e * ts <= max_bytes))
        .collect();
    let mut counts: Vec<u32> = (0..=6).map(|j| cpp << j).collect();
    let mut p = cpp.next_power_of_two();
    while u64::from(p) <= 64 * u64::from(cpp) {
        counts.push(p);
        p *= 2;
    }
    counts.sort_unstable();
    counts.dedup();
    let limit = Ratio::new(MAX_LOSS.0, MAX_LOSS.1);
    let mut plans: Vec<(bool, usize, Plan)> = counts
        .into_iter()
        .filter(|&c| c == cpp || u64::from(c) <= spec.part_elements)
        .map(|c| (c, growth_loss(prog, c)))
        .filter(|&(c, loss)| c == cpp || loss <= limit)
        .map(|(c, loss)| {
            let per_loop = u64::from(c) * parts * u64::from(instances.max(1));
            // The call's own count: the elements per rank of an allgather or reduce-scatter,
            // per peer of an all-to-all.
            let picks = |e: u64| count_fits(e / mult, per_loop);
            // The first window size from which on every size picks the XML.
            let first = (0..=window.len())
                .rev()
                .take_while(|&i| i == window.len() || picks(window[i].1))
                .last()
                .unwrap_or(window.len());
            let min = if first == window.len() {
                // No size of the window picks it from some size on: keep the window as asked.
                min_bytes
            } else {
                // Just above the last size that does not pick it, and never below one loop of
                // elements (no smaller call can be picked).
                let one_loop = per_loop * mult * ts;
                let from = match first {
                    0 => one_loop,
                    f => (window[f - 1].1 * ts + 1).max(one_loop),
                };
                if min_bytes == 0 && picks(declared_elems) {
                    // The declared call comes first: from it, if it is smaller.
                    from.min(declared)
                } else if min_bytes == 0 || first > 0 {
                    from.max(min_bytes)
                } else {
                    min_bytes
                }
            };
            let inside = |b: u64| b >= min && (max_bytes == 0 || b <= max_bytes);
            let declared_selected = picks(declared_elems) && inside(declared);
            // Sizes of the window written, or of one the file set, that are left to NCCL.
            let asked = |b: u64| min_bytes > 0 && b >= min_bytes;
            let skipped: Vec<u64> = window
                .iter()
                .filter(|w| !picks(w.1) && (inside(w.1 * ts) || asked(w.1 * ts)))
                .map(|w| w.0)
                .collect();
            let plan = Plan {
                from: cpp,
                cpp: c,
                loss,
                min_bytes: min,
                skipped,
                declared,
                declared_selected,
            };
            (declared_selected, first, plan)
        })
        .collect();
    // Fewer chunks fit the executor better (steps, offsets, nodes): the fewest among those
    // that lose at most 1%, then the fewest among those within the limit.
    let small = Ratio::new(1, 100);
    plans.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then(a.1.cmp(&b.1))
            .then(a.2.skipped.len().cmp(&b.2.skipped.len()))
            .then((a.2.loss > small).cmp(&(b.2.loss > small)))
            .then(a.2.cpp.cmp(&b.2.cpp))
    });
    plans.into_iter().map(|p| p.2).collect()
}

/// The E0054 warning for a choice that leaves sizes of its window, or the declared call, to
/// NCCL's own algorithm; None when the runtime picks the XML wherever it was asked to.
pub fn warning(plan: &Plan, a: &super::Algo, at: Span) -> Option<Diagnostic> {
    let c = a.nchunksperloop;
    let mut what = Vec::new();
    if !plan.declared_selected {
        what.push(format!("the declared call of {}", show(plan.declared)));
    }
    if !plan.skipped.is_empty() {
        what.push(format!("{} of its size window", show_sizes(&plan.skipped)));
    }
    if what.is_empty() {
        return None;
    }
    let mut d = Diagnostic::warning(
        Code::MscclUnselectable,
        at,
        format!(
            "the runtime would not select this XML for {}: the calls' counts are not multiples of nchunksperloop = {c}, so NCCL silently runs its own algorithm there",
            what.join(" or ")
        ),
    )
    .label("the schedule written as MSCCL XML")
    .help(format!(
        "the XML claims sizes from minBytes = {}; fewer chunks (a smaller `chunks`, `k`, `channels` or `instances`) start lower, and a declared size whose count ({}) is a multiple of {c} is picked",
        plan.min_bytes,
        if a.coll == "alltoall" {
            "the elements each rank sends each peer"
        } else {
            "per rank for allgather and reduce-scatter"
        }
    ));
    if plan.cpp != plan.from {
        d = d.note(format!(
            "the program's {} chunks per part were refined to {} (at most {} of the model's bandwidth lost to unequal chunks)",
            plan.from,
            plan.cpp,
            percent(plan.loss)
        ));
    }
    Some(d)
}

/// A loss as a percentage with one decimal: `1.2%`.
pub fn percent(r: Ratio<u64>) -> String {
    let tenths = (r * Ratio::from_integer(1000)).round().to_integer();
    if tenths == 0 && r > Ratio::from_integer(0) {
        return "under 0.1%".into();
    }
    format!("{}.{}%", tenths / 10, tenths % 10)
}

/// nccl-tests' sizes from 8 B to `top` at which the runtime picks `a` for a call of elements of
/// `type_bytes` bytes (by the executor's rule: the call's count a multiple of `nchunksperloop`,
/// the bytes within `minBytes .. maxBytes`), and those at which it does not.
pub fn picked(a: &super::Algo, type_bytes: u64, top: u64) -> (Vec<u64>, Vec<u64>) {
    tests_sizes(8, top)
        .into_iter()
        .partition(|&s| picks_at(a, type_bytes, s))
}

/// Whether the runtime picks `a` for nccl-tests' call of `bytes` bytes of `type_bytes`-byte
/// elements.
pub fn picks_at(a: &super::Algo, type_bytes: u64, bytes: u64) -> bool {
    let Some(kind) = super::coll_kind(&a.coll) else {
        return false;
    };
    let n = a.ngpus.max(1) as u64;
    let e = tests_elements(kind, n, type_bytes, bytes);
    count_fits(call_count(kind, e, n), a.nchunksperloop.max(1) as u64)
        && bytes_fit(a, u128::from(e * type_bytes))
}

/// For people: where the runtime picks `a` among nccl-tests' sizes up to `top` ("the runtime
/// picks it at 16 B .. 1 GiB", "... at none"), and where inside its window it does not.
pub fn describe(a: &super::Algo, type_bytes: u64, top: u64) -> String {
    let (yes, no) = picked(a, type_bytes, top);
    if yes.is_empty() {
        return "the runtime picks it at none".into();
    }
    // Only the sizes inside the XML's window count as skipped.
    let inside: Vec<u64> = no
        .into_iter()
        .filter(|&s| bytes_fit(a, u128::from(s)))
        .collect();
    let mut out = format!("the runtime picks it at {}", show_sizes(&yes));
    if !inside.is_empty() {
        out.push_str(&format!(
            ", not at {} inside its window",
            show_sizes(&inside)
        ));
    }
    out
}

/// The share of the bandwidth refining `prog` to `c` chunks per part can cost: `1 - 1 / g` for
/// the largest growth `g` of what one rank sends another ([`load_growth`]).
fn growth_loss(prog: &Program, c: u32) -> Ratio<u64> {
    let g = load_growth(prog, c);
    Ratio::from_integer(1) - g.recip()
}

/// "8 B, 16 B and 2 KiB" for a list of sizes, runs of doublings as "8 B .. 2 KiB".
pub fn show_sizes(sizes: &[u64]) -> String {
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for &s in sizes {
        match runs.last_mut() {
            Some((_, hi)) if hi.checked_mul(2) == Some(s) => *hi = s,
            _ => runs.push((s, s)),
        }
    }
    let parts: Vec<String> = runs
        .iter()
        .map(|&(lo, hi)| {
            if lo == hi {
                show(lo)
            } else {
                format!("{} .. {}", show(lo), show(hi))
            }
        })
        .collect();
    match parts.as_slice() {
        [] => "none".into(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Buf, OpKind, Slice, Spec};
    use crate::sema::model::{Dtype, ReduceOp};

    /// Rank 0 sends rank 1 every input chunk of part 0 but chunk `alone`, which goes to rank 2
    /// (not a collective; only its shape matters here).
    fn prog(kind: CollectiveKind, ranks: u32, cpp: u32, bytes: u64, alone: u32) -> Program {
        let parts = if kind == CollectiveKind::Allreduce {
            1
        } else {
            u64::from(ranks)
        };
        let spec = Spec {
            kind,
            ranks,
            part_elements: bytes / 4 / parts,
            chunks_per_part: cpp,
            dtype: Dtype::F32,
            op: ReduceOp::Sum,
            root: None,
        };
        let mut p = Program::new("test", spec);
        for j in 0..cpp {
            let peer = if j == alone { 2 } else { 1 };
            let src = Slice::one(Buf::Input, j);
            p.push(0, OpKind::Send { peer, src, tag: 0 }, Vec::<u32>::new());
        }
        p
    }

    #[test]
    fn nccl_tests_counts() {
        assert_eq!(tests_elements(CollectiveKind::Allreduce, 12, 4, 1024), 256);
        // 1 KiB of floats over 12 ranks: 21 each, 252 in all.
        assert_eq!(tests_elements(CollectiveKind::Allgather, 12, 4, 1024), 252);
        // An all-to-all's count is per peer: 21 floats to each of 12 ranks.
        assert_eq!(tests_elements(CollectiveKind::Alltoall, 12, 4, 1024), 252);
        assert_eq!(call_count(CollectiveKind::Alltoall, 252, 12), 21);
        assert_eq!(tests_sizes(100, 1024), vec![128, 256, 512, 1024]);
        assert_eq!(show_sizes(&[8, 16, 32, 1024]), "8 B .. 32 B and 1 KiB");
    }

    #[test]
    fn an_odd_forest_count_is_refined_to_a_power_of_two() {
        // 16 ranks, 259 chunks per part (7 trees x 37 chunks), 1 GiB allgather.
        let plans = plan(
            &prog(CollectiveKind::Allgather, 16, 259, 1 << 30, 0),
            1,
            0,
            0,
        );
        let best = &plans[0];
        assert_eq!(best.cpp, 512);
        assert!(best.declared_selected && best.skipped.is_empty());
        // A count of 16 x 512 floats per rank, 16 ranks: 512 KiB is the first size that picks
        // it (RCCL's rule would take 32 KiB).
        assert_eq!(best.min_bytes, 512 << 10);
        // Rank 1 gets 511 new chunks for 258 old ones (chunk 0, of width 1, goes to rank 2).
        assert_eq!(best.loss, Ratio::new(253, 132349));
    }

    #[test]
    fn a_power_of_two_count_stays() {
        let plans = plan(&prog(CollectiveKind::Allreduce, 8, 8, 1 << 20, 0), 1, 0, 0);
        assert_eq!((plans[0].cpp, plans[0].min_bytes), (8, 32));
        assert_eq!(plans[0].loss, Ratio::from_integer(0));
    }

    #[test]
    fn an_alltoall_is_picked_from_one_loop_per_peer() {
        // 8 ranks, 1 chunk per block: nchunksperloop 8, so each peer's count a multiple of 8,
        // 64 floats in all (256 B) the first size; 1 MiB declared.
        let plans = plan(&prog(CollectiveKind::Alltoall, 8, 1, 1 << 20, 0), 1, 0, 0);
        let best = &plans[0];
        assert_eq!((best.cpp, best.min_bytes), (1, 256));
        assert!(best.declared_selected && best.skipped.is_empty());
    }

    #[test]
    fn a_window_too_low_for_the_count_names_the_sizes() {
        // 48 chunks; chunk 2 alone to rank 2 grows to 2 new chunks of 64 (mean 4/3): a pair's
        // load grows by 3/2, a third lost, so 64 is refused; 128 (chunk 2: 3 of a mean 8/3) and
        // 256 (6 of 16/3) lose 1/9; 512 (11 of 32/3) loses 1/33 and starts at 2 KiB.
        let plans = plan(
            &prog(CollectiveKind::Allreduce, 4, 48, 1 << 20, 2),
            1,
            64,
            4096,
        );
        let best = &plans[0];
        assert_eq!(best.cpp, 512);
        assert_eq!(best.loss, Ratio::new(1, 33));
        assert_eq!(best.min_bytes, 2048);
        assert_eq!(show_sizes(&best.skipped), "64 B .. 1 KiB");
    }
}
