//! What to change when a ForestColl schedule exceeds a limit of the MSCCL executor (issue 5:
//! "a coded error and advice such as `fix k to N`").
//!
//! The knobs, cheapest first: channels per tree group (`channels` in `target msccl`: more
//! spread fewer steps over more thread blocks, fewer need fewer channels), one instance instead
//! of several, fewer pipelined chunks (fewer steps per thread block), and a smaller `k` (fewer
//! trees, so fewer groups of trees that share a link and fewer channels). Every candidate is
//! built and validated exactly as `collc build --target msccl` would, so the advice names a
//! setting that is known to fit. `k` is scanned upwards from 1 (the paper's practical rule:
//! small k) while the trees still fit in the executor's channels; the largest `k` that builds
//! is the advice.

use super::{Options, emit, limits, lower::channels_needed};
use crate::ir::Program;
use crate::sema::model::{AutoOr, Family, Model};

/// Most `k` the scan tries (the paper scans k below 10).
const MAX_K: u64 = 9;

/// `m` with its forest's `k` and `chunks` replaced, lowered (None if that fails).
fn lower_with(m: &Model, k: AutoOr<u64>, chunks: AutoOr<u64>) -> Option<Program> {
    let mut m2 = m.clone();
    let s = m2.schedule.as_mut()?;
    s.family = Family::Forest { k, chunks };
    crate::lower::lower(&m2).ok()
}

/// Whether `p` under `o` fits the executor's channels and then builds and validates.
fn fits(p: &Program, o: &Options) -> bool {
    let (width, _) = channels_needed(p, o);
    width.saturating_mul(o.instances) <= limits::MAX_CHANNELS && emit(p, o).is_ok()
}

/// A help line naming settings under which `m`'s forest (lowered as `p`) fits the executor,
/// or saying that none of the knobs helps; None when `m` is not a forest schedule.
pub(super) fn forest(m: &Model, p: &Program, opts: &Options) -> Option<String> {
    let Some(Family::Forest { k, chunks }) = m.schedule.as_ref().map(|s| s.family.clone()) else {
        return None;
    };
    let (_, colours) = channels_needed(
        p,
        &Options {
            channels: 1,
            ..opts.clone()
        },
    );
    // Channels per tree group, with the instances asked for, then with one instance.
    let tries: &[u32] = if opts.instances > 1 {
        &[opts.instances, 1]
    } else {
        &[1]
    };
    for &inst in tries {
        let most = limits::MAX_CHANNELS / colours.saturating_mul(inst).max(1);
        // Most channels first (fewest steps per block); more than a few tries rarely help
        // (spreading does not shorten a rank's step list) and each is a full build.
        let candidates = (1..=most)
            .rev()
            .filter(|&g| (g, inst) != (opts.channels, opts.instances))
            .take(3);
        for g in candidates {
            let o = Options {
                channels: g,
                instances: inst,
                ..opts.clone()
            };
            if fits(p, &o) {
                let one = if inst == opts.instances {
                    String::new()
                } else {
                    " and one instance (`instances: 1;`)".into()
                };
                return Some(format!(
                    "use {g} channel{} per group of trees (`channels: {g};` in `target msccl`, or `--channels {g}`){one}",
                    if g == 1 { "" } else { "s" }
                ));
            }
        }
    }
    // Fewer pipelined chunks, when the trees fit the channels at all: half the count the
    // program was lowered with (`chunks: auto`'s choice when it was auto), and so on.
    if colours <= limits::MAX_CHANNELS {
        let mut c = lowered_chunks(m, k, chunks) / 2;
        while c >= 1 {
            let o = Options {
                channels: opts
                    .channels
                    .min(limits::MAX_CHANNELS / colours.max(1))
                    .max(1),
                instances: 1,
                ..opts.clone()
            };
            if lower_with(m, k, AutoOr::Fixed(c)).is_some_and(|q| fits(&q, &o)) {
                return Some(format!(
                    "use fewer chunks (`chunks: {c};`){}",
                    settings(&o, opts)
                ));
            }
            c /= 2;
        }
    }
    // Fewer trees.
    let top = match k {
        AutoOr::Fixed(k) => k.saturating_sub(1).min(MAX_K),
        AutoOr::Auto => MAX_K,
    };
    let mut best = None;
    let mut first = None;
    for kk in 1..=top {
        let Some(q) = lower_with(m, AutoOr::Fixed(kk), chunks) else {
            break;
        };
        let o = Options {
            channels: 1,
            instances: 1,
            ..opts.clone()
        };
        let (width, colours) = channels_needed(&q, &o);
        first.get_or_insert(colours);
        if width > limits::MAX_CHANNELS {
            break;
        }
        if fits(&q, &o) {
            best = Some((kk, o));
        }
    }
    if let Some((kk, o)) = best {
        return Some(format!(
            "fix k to {kk} (`k: {kk};`){}: fewer trees per rank, so fewer groups of trees that cross a common link",
            settings(&o, opts)
        ));
    }
    Some(match first {
        Some(c) if c > limits::MAX_CHANNELS => format!(
            "no setting fits: even with k = 1 the trees form {c} groups that cross a common link, and each needs a channel of its own (the executor has {}); use `schedule ring;` for MSCCL",
            limits::MAX_CHANNELS
        ),
        _ => "no setting of channels, chunks or k that collc tried fits; use `schedule ring;` for MSCCL, or a runtime with a larger MSCCL_MAX_NUM_STEPS (`--max-steps`)".into(),
    })
}

/// The chunk count `m`'s forest lowers with: the fixed one, or what `chunks: auto` resolves to.
pub(super) fn lowered_chunks(m: &Model, k: AutoOr<u64>, chunks: AutoOr<u64>) -> u64 {
    match chunks {
        AutoOr::Fixed(c) => c,
        AutoOr::Auto => m
            .collective
            .as_ref()
            .and_then(|c| crate::lower::forest::solve_chunked(m, c, k, chunks, c.span).ok())
            .map_or(1, |(_, ch)| ch.chunks),
    }
}

/// ", with one channel per group and one instance" when `o` differs from what was asked.
fn settings(o: &Options, asked: &Options) -> String {
    let mut v = Vec::new();
    if o.channels != asked.channels {
        v.push(format!("`channels: {};`", o.channels));
    }
    if o.instances != asked.instances {
        v.push(format!("`instances: {};`", o.instances));
    }
    if v.is_empty() {
        String::new()
    } else {
        format!(" with {} in `target msccl`", v.join(" and "))
    }
}
