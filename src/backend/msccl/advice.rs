//! What to change when a schedule exceeds a limit of the MSCCL executor (E0040): the help line
//! names a setting that was built and validated exactly as `collc build --target msccl` would
//! build it, or says that none of the knobs tried fits.
//!
//! The knobs, cheapest first, for every family: more channels (`channels` in `target msccl`
//! or `--channels`: a rank's messages spread over more thread blocks, so fewer steps each),
//! fewer channels or instances (when the XML needs more than the executor's 32 channels: the
//! most instances that fit at each channel width, 32, 16, 10, 8, ..., 1). For ForestColl also
//! fewer pipelined chunks (fewer steps per thread block; every smaller count when there are at
//! most 8, else halving) and a smaller `k` (fewer trees; `k` is scanned upwards from 1, the
//! paper's practical rule, and the largest `k` that builds is the advice). Then a runtime
//! built with a larger `MSCCL_MAX_NUM_STEPS` (`--max-steps`, up to the legacy runtime's 256),
//! when the steps per thread block are what does not fit. Last, another schedule: ring, then
//! recursive doubling, each built and validated like the others; when none fits, the help
//! names the `mpi` target if it builds the program.

use super::{AUTO_CHANNELS, Options, emit, limits};
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

/// Whether `p` under `o` builds and validates.
fn fits(p: &Program, o: &Options) -> bool {
    emit(p, o).is_ok()
}

/// How a setting is written in the help line: in `target msccl`, and on the command line.
fn knobs(o: &Options, asked: &Options) -> Option<String> {
    let mut file = Vec::new();
    let mut flags = Vec::new();
    if o.channels != asked.channels {
        file.push(format!("`channels: {};`", o.channels));
        flags.push(format!("`--channels {}`", o.channels));
    }
    if o.instances != asked.instances {
        file.push(format!("`instances: {};`", o.instances));
        flags.push(format!("`--instances {}`", o.instances));
    }
    (!file.is_empty()).then(|| {
        format!(
            "{} in `target msccl`, or {}",
            file.join(" and "),
            flags.join(" ")
        )
    })
}

/// Channel and instance settings to try, nearest to `asked` first.
/// With automatic channels (every count was tried) only the instances change.
fn settings(asked: &Options) -> Vec<Options> {
    let c = asked.channels;
    // Every count up to about twice the asked one (so the advice is the fewest nearby), then
    // farther steps.
    let mut chans: Vec<u32> = (c + 1..=(2 * c).max(c + 3))
        .chain([4 * c, 8 * c, limits::MAX_CHANNELS])
        .filter(|g| *g > c && *g <= limits::MAX_CHANNELS)
        .collect();
    chans.extend([c / 2, c / 4, 1].into_iter().filter(|g| *g >= 1 && *g < c));
    chans.dedup();
    if c == AUTO_CHANNELS {
        chans.clear();
    }
    let mut out = Vec::new();
    // The instances asked for, then the most that fit 32 channels at each channel width
    // (32, 16, 10, 8, ... 1), fewer than asked.
    let mut insts = vec![asked.instances.max(1)];
    for w in 1..=limits::MAX_CHANNELS {
        let i = limits::MAX_CHANNELS / w;
        if i < asked.instances && !insts.contains(&i) {
            insts.push(i);
        }
    }
    for inst in insts {
        if inst != asked.instances {
            out.push(Options {
                instances: inst,
                ..asked.clone()
            });
        }
        for &g in &chans {
            out.push(Options {
                channels: g,
                instances: inst,
                ..asked.clone()
            });
        }
    }
    out
}

/// A help line naming settings under which `m`'s schedule (lowered as `p`) fits the executor,
/// or saying that none of the knobs tried helps.
pub(super) fn advise(m: &Model, p: &Program, opts: &Options) -> String {
    for o in settings(opts) {
        if fits(p, &o) {
            return format!("use {}", knobs(&o, opts).unwrap_or_default());
        }
    }
    if let Some(Family::Forest { k, chunks }) = m.schedule.as_ref().map(|s| s.family.clone()) {
        if let Some(help) = forest(m, k, chunks, opts) {
            return help;
        }
    }
    // A runtime with more steps per thread block.
    if opts.max_steps < 256 {
        let mut s = opts.max_steps.max(1) * 2;
        while s <= 256 {
            let o = Options {
                max_steps: s,
                ..opts.clone()
            };
            if fits(p, &o) {
                return format!(
                    "no setting of channels or instances fits the executor's {} steps per thread block; a runtime built with MSCCL_MAX_NUM_STEPS={s} runs it (`--max-steps {s}`)",
                    opts.max_steps
                );
            }
            s *= 2;
        }
    }
    // Another schedule.
    for (name, family) in [
        ("ring", Family::ring()),
        ("recursive_doubling", Family::RecursiveDoubling),
    ] {
        let mut m2 = m.clone();
        let Some(s) = m2.schedule.as_mut() else {
            break;
        };
        if s.family == family {
            continue;
        }
        s.family = family;
        if let Ok(q) = crate::lower::lower(&m2)
            && let Some(o) = std::iter::once(opts.clone())
                .chain(settings(opts))
                .find(|o| fits(&q, o))
        {
            let more = knobs(&o, opts).map_or(String::new(), |k| format!(" with {k}"));
            return format!(
                "no setting of channels, instances, chunks or k that collc tried fits this schedule; `schedule {name};`{more} fits the executor"
            );
        }
    }
    if crate::backend::mpi::emit(p, "check").is_ok() {
        return "no setting of channels, instances, chunks or k, and no ring or recursive doubling schedule, fits the executor; the `mpi` target builds this schedule (`--target mpi -o DIR`)".into();
    }
    "no setting of channels, instances, chunks or k, and no ring or recursive doubling schedule, that collc tried fits the executor".into()
}

/// Forest knobs: fewer pipelined chunks, then fewer trees.
fn forest(m: &Model, k: AutoOr<u64>, chunks: AutoOr<u64>, opts: &Options) -> Option<String> {
    // Half the count the program was lowered with (`chunks: auto`'s choice when it was auto),
    // and so on, with the channels asked for and one instance.
    let one = Options {
        instances: 1,
        ..opts.clone()
    };
    let lowered = lowered_chunks(m, k, chunks);
    // Every smaller count when there are few, else halving.
    let counts: Vec<u64> = if lowered <= 8 {
        (1..lowered).rev().collect()
    } else {
        std::iter::successors(Some(lowered / 2), |c| Some(c / 2))
            .take_while(|c| *c >= 1)
            .collect()
    };
    for c in counts {
        if let Some(q) = lower_with(m, k, AutoOr::Fixed(c)) {
            for o in std::iter::once(one.clone()).chain(settings(&one)) {
                if fits(&q, &o) {
                    let more = knobs(&o, opts).map_or(String::new(), |s| format!(" with {s}"));
                    return Some(format!("use fewer chunks (`chunks: {c};`){more}"));
                }
            }
        }
    }
    // Fewer trees.
    let top = match k {
        AutoOr::Fixed(k) => k.saturating_sub(1).min(MAX_K),
        AutoOr::Auto => MAX_K,
    };
    let mut best = None;
    for kk in 1..=top {
        let Some(q) = lower_with(m, AutoOr::Fixed(kk), chunks) else {
            break;
        };
        match std::iter::once(one.clone())
            .chain(settings(&one))
            .find(|o| fits(&q, o))
        {
            Some(o) => best = Some((kk, o)),
            None if best.is_some() => break,
            None => {}
        }
    }
    best.map(|(kk, o)| {
        let more = knobs(&o, opts).map_or(String::new(), |s| format!(" with {s}"));
        format!(
            "fix k to {kk} (`k: {kk};`){more}: fewer trees per rank, so fewer messages per rank"
        )
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
            .map_or(1, |(_, ch)| ch.program),
    }
}
