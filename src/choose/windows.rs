//! Size windows for runtimes that pick a schedule by message size (MSCCL's `minBytes` and
//! `maxBytes`, the way NCCL's tuner picks algorithms by size): every candidate family
//! ([`super::candidates`]) is simulated at each size of a sweep ([`super::evaluate`]), and
//! consecutive sizes with the same winner form one window. A window runs from just above the
//! previous window's largest size (0 for the first) to its own largest size (no limit for the
//! last), and its schedule is built at that largest size (so `stages: auto` and `chunks: auto`
//! are chosen for it).

use crate::net::FlowParams;
use crate::sema::model::{Family, Model};
use rayon::prelude::*;

/// One window: messages of `min..=max` bytes (`max == 0`: no upper limit) use `family`, built
/// for `at` bytes; `ranked` lists the families by simulated time at `at` (fastest first), for
/// falling back when the fastest cannot be emitted.
#[derive(Debug, Clone)]
pub struct Window {
    pub min: u64,
    pub max: u64,
    pub at: u64,
    pub family: Family,
    pub ranked: Vec<(Family, f64)>,
}

/// `families` simulated at `bytes`, fastest first (ties in the given order); those that cannot
/// run there are left out.
pub fn rank(m: &Model, families: &[Family], bytes: u64, params: &FlowParams) -> Vec<(Family, f64)> {
    let mut r: Vec<(usize, Family, f64)> = families
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            super::evaluate(m, f, bytes, params)
                .ok()
                .map(|run| (i, f.clone(), run.seconds()))
        })
        .collect();
    r.sort_by(|a, b| a.2.total_cmp(&b.2).then(a.0.cmp(&b.0)));
    r.into_iter().map(|(_, f, t)| (f, t)).collect()
}

/// The windows over `sizes` (ascending), among the candidates `usable` keeps.
pub fn windows(
    m: &Model,
    sizes: &[u64],
    params: &FlowParams,
    usable: &(dyn Fn(&Family) -> bool + Sync),
) -> Vec<Window> {
    let cands: Vec<Family> = super::candidates(m)
        .into_iter()
        .filter(|f| usable(f))
        .collect();
    let ranked: Vec<Vec<(Family, f64)>> = sizes
        .par_iter()
        .map(|&s| rank(m, &cands, s, params))
        .collect();
    let mut out: Vec<Window> = Vec::new();
    for (&s, r) in sizes.iter().zip(ranked) {
        let Some((best, _)) = r.first().cloned() else {
            continue;
        };
        match out.last_mut() {
            Some(w) if w.family == best => {
                w.max = s;
                w.at = s;
                w.ranked = r;
            }
            _ => {
                let min = out.last().map_or(0, |w| w.max + 1);
                out.push(Window {
                    min,
                    max: s,
                    at: s,
                    family: best,
                    ranked: r,
                });
            }
        }
    }
    if let Some(w) = out.last_mut() {
        w.max = 0;
    }
    out
}

/// A window's bounds and the family built for it, for people: `0 B .. 32768 B: ring (built for
/// 32768 B)`; `max == 0` reads `no limit`.
pub fn describe(w: &Window, family: &Family) -> String {
    let max = if w.max == 0 {
        "no limit".to_string()
    } else {
        format!("{} B", w.max)
    };
    format!(
        "{} B .. {max}: {} (built for {} B)",
        w.min,
        crate::compare::short(family),
        w.at
    )
}
