//! Lowering once per structure: what a lowered program depends on besides the collective's
//! size ([`structure`]), and the programs already lowered and proved in this process by that
//! key ([`lowered`]), so a sweep over sizes (`collc compare`, `schedule auto`, the size
//! windows) lowers and proves each family's program once and only converts its bytes per size.
//!
//! A program's ops name slots, not elements: the size enters through
//! [`crate::ir::Spec::part_elements`] alone, which the GOAL conversion reads when it sizes
//! messages (`goal::from_verified_at`), and the proof is about slots. What a size does change is
//! the parameters `auto` resolves to (a ring's channels are as many as the elements fill, NCCL's
//! tree's chunks follow the bytes, `stages: auto` the cost at that size): the key holds them as
//! resolved (a ring's rings as the channel search lays them), so two sizes share a program
//! exactly when lowering them would build the same ops.
//! Families whose parameters are costly to resolve without lowering (forests, the all-to-all
//! optimum's chunks) or that do not lower to host programs have no key and lower per size.
//!
//! The cache ([`super::kept::Kept`]) keeps the programs of the most recent structures up to
//! [`BUDGET`] ops in all (always the newest one); a key being lowered by one thread is waited
//! for by the others that need it, never lowered twice at once.

use super::kept::Kept;
use super::{ring_orders, ring_slices};
use crate::diag::Diagnostic;
use crate::ir::{Program, verify::Proof};
use crate::sema::model::{AutoOr, Family, Model};
use std::sync::Arc;

/// Ops the cache holds at most, summed over its programs (the newest always stays).
pub const BUDGET: usize = 24 << 20;

/// A program and its proof, shared by the sizes of one structure.
pub type Proved = Arc<(Program, Proof)>;

/// What `m`'s lowered program depends on besides the collective's size, written out in full,
/// or None for a family that lowers per size (see the module doc).
pub fn structure(m: &Model) -> Option<String> {
    let c = m.collective.as_ref()?;
    let family = super::family_of(m, c.kind);
    let resolved = match &family {
        Family::Ring { slices, channels } => {
            // The rings themselves (the channel search is cached): `channels: auto` allows
            // as many channels as the elements fill, so small sizes ask the search for fewer,
            // and it often lays the same rings for them all (one ring on a fat tree).
            let slices = ring_slices(c, *slices);
            let rings = ring_orders(m, c, *channels, slices).ok()?;
            format!("ring {slices} slices {rings:?}")
        }
        Family::RecursiveDoubling => "recursive_doubling".into(),
        Family::RecursiveMultiplying { stages, model } => match stages {
            AutoOr::Fixed(s) => format!("recursive_multiplying {s:?}"),
            AutoOr::Auto => format!(
                "recursive_multiplying {:?}",
                super::auto_stages(m, c, model.as_deref())
            ),
        },
        Family::NcclTree { chunks } => {
            let (_, ch, chunks) = super::nccl_tree_plan(m, c, *chunks);
            format!("nccl_tree {ch} channels {chunks} chunks")
        }
        Family::Binomial
        | Family::Pairwise { .. }
        | Family::Bruck { .. }
        | Family::Hierarchical => format!("{family:?}"),
        _ => return None,
    };
    let topo = m.topology.as_ref().map(|t| t.key()).unwrap_or_default();
    Some(format!(
        "{resolved}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{topo}",
        c.kind, c.ranks, c.root, c.dtype, c.op, m.limits,
    ))
}

static CACHE: Kept<String, Proved> = Kept::new(BUDGET);

/// `m`'s program and proof: from the cache when a program of the same structure was lowered
/// before, else lowered and proved by `lower` (and kept when it succeeds). Without a key,
/// `lower` runs every time.
pub fn lowered(
    m: &Model,
    lower: impl FnOnce() -> Result<(Program, Proof), Vec<Diagnostic>>,
) -> Result<Proved, Vec<Diagnostic>> {
    let Some(key) = structure(m) else {
        return lower().map(Arc::new);
    };
    CACHE.get(key, || lower().map(Arc::new), |p| p.1.ops)
}

#[cfg(test)]
mod tests {
    use super::structure;

    /// A ring allgather of `per_rank` f32 elements per rank over 600 hosts on one switch,
    /// with `channels` as the schedule gives it.
    fn ring(per_rank: u64, channels: &str) -> crate::sema::model::Model {
        let n = 600;
        let src = format!(
            "topology t {{ compute h[{n}]; switch s; for i in 0..{n} {{ link h[i] <-> s : 25 GB/s; }} }} \
             collective allgather {{ size: {} B; dtype: f32; }} schedule ring {{ channels: {channels}; }}",
            per_rank * n * 4
        );
        crate::sema::checked(&src)
    }

    /// `channels: auto` lets a size ask the search for as many channels as its elements fill
    /// (at most 23 at 600 ranks, `rings::auto_limit`), and on one switch the search lays one
    /// ring whatever it may lay: every size shares one key (one program), whether its elements
    /// fill 4, 22, 24 or more channels. Rings that differ keep keys of their own.
    #[test]
    fn sizes_share_a_structure_when_the_search_lays_the_same_rings() {
        assert_eq!(crate::net::rings::auto_limit(600), 23);
        let key = |per_rank, channels| structure(&ring(per_rank, channels)).expect("a key");
        let one = key(24, "auto");
        for per_rank in [1, 4, 22, 31, 1000] {
            assert_eq!(key(per_rank, "auto"), one, "{per_rank} elements per rank");
        }
        let resolved = one.split('|').next().unwrap_or_default().to_string();
        assert!(
            resolved.starts_with("ring 1 slices [[0, 1, 2, "),
            "{resolved}"
        );
        assert_eq!(resolved.matches('[').count(), 2, "one ring: {resolved}");
        assert_eq!(
            key(24, "1"),
            one,
            "the one ring of `auto` is `channels: 1`'s"
        );
        assert_ne!(key(24, "2"), one, "two channels are another program");
        assert_ne!(key(24, "2"), key(24, "3"));
    }
}
