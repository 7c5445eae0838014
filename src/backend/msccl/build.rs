//! Building a model's schedule into a validated XML (`collc build --target msccl`): the rank
//! limit checked before lowering, lowering and proof, then [`emit`], which lowers the program
//! to MSCCL, writes, reads back, checks and executes the XML. `channels: auto` is the fewest
//! channels that fit, and a forest's `chunks: auto` the most chunks that fit; both are found
//! by building. A schedule over an executor limit gets advice ([`super::advice`]).

use super::{
    AUTO_CHANNELS, Algo, At, Code, Diagnostic, Emitted, Options, Problem, Program, advice,
    build_span, limits, lower, rules, selectable, validate, write,
};
use crate::sema::model::{AutoOr, Family, Model};

/// Up to this many ranks, an E0040 for too many ranks checks that the `mpi` target builds the
/// schedule before naming it.
const MPI_CHECK_RANKS: usize = 16384;

/// The selectable choices ([`selectable::plan`]) tried before the program as written.
const TRIES: usize = 3;

/// The channel counts `channels: auto` tries, in order.
const AUTO_TRIES: &[u32] = &[1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32];

/// `collc build --target msccl`: lowers and verifies `m`'s schedule, then [`emit`]s it; every
/// problem as a diagnostic at [`build_span`]. A schedule over an executor limit gets advice
/// (the `advice` module): settings that fit, found by building them.
pub fn build(m: &Model, opts: &Options) -> Result<Emitted, Vec<Diagnostic>> {
    build_with(m, opts, &crate::progress::Quiet)
}

/// [`build`], reporting its phases to `progress`: those of
/// [`crate::lower::lower_and_verify_with`], then [`Phase::Emit`](crate::progress::Phase::Emit).
pub fn build_with(
    m: &Model,
    opts: &Options,
    progress: &dyn crate::progress::Progress,
) -> Result<Emitted, Vec<Diagnostic>> {
    // One <gpu> per rank: over the reader's limit no XML can run, so say so before lowering.
    let ranks = m.collective.as_ref().map_or(0, |c| c.ranks.len());
    if ranks > limits::MAX_SUBS as usize {
        // The other target this schedule builds for, checked (up to a size where checking is
        // quick next to the error it explains).
        let mpi = ranks <= MPI_CHECK_RANKS
            && crate::lower::lower_and_verify(m)
                .is_ok_and(|(p, _)| crate::backend::mpi::emit(&p, "check").is_ok());
        let help = if mpi {
            "MSCCL cannot run on more than 1024 ranks with one XML; the `mpi` target builds this schedule (`--target mpi -o DIR`)"
        } else {
            "MSCCL cannot run on more than 1024 ranks with one XML; build it for fewer ranks"
        };
        return Err(vec![
            Problem::new(
                Code::MscclLimit,
                At::Algo,
                format!("{ranks} gpus, but the executor's reader keeps at most {} children per element (MAX_SUBS, unchecked: it overflows)", limits::MAX_SUBS),
                help,
            )
            .diagnostic(build_span(m)),
        ]);
    }
    // `chunks: auto` on a forest means the best count the executor can run: the model's choice
    // is often hundreds of chunks (src/forest/chunking.rs), far over the steps a thread block
    // may take. Counts are tried upwards (1, 2, 4, ... up to the model's choice and
    // `max_steps`), then between the last that fits and the first that does not: a count that
    // does not fit is the costliest to try (the largest program, every channel count), so the
    // search meets one or two of them.
    if let Some(Family::Forest {
        k,
        chunks: AutoOr::Auto,
    }) = m.schedule.as_ref().map(|s| s.family.clone())
    {
        // Every count lowers the same forests: solve them once (unless the caller has).
        let solved = m.solved.clone().or_else(|| {
            let c = m.collective.as_ref()?;
            crate::lower::forest::Solved::new(m, &[c], k, progress)
                .ok()
                .map(std::sync::Arc::new)
        });
        let m = &Model {
            solved,
            ..m.clone()
        };
        let model_count = advice::lowered_chunks(m, k, AutoOr::Auto);
        let top = model_count.min(u64::from(opts.max_steps)).max(1);
        let with_count = |c: u64| {
            let mut fixed = m.clone();
            if let Some(s) = fixed.schedule.as_mut() {
                s.family = Family::Forest {
                    k,
                    chunks: AutoOr::Fixed(c),
                };
            }
            fixed
        };
        // Counts are probed: lowered to MSCCL and checked against the executor's rules in
        // memory ([`fit`]); only the count chosen is written, read back and executed. Only the
        // error of one chunk is shown (with advice); the others are dropped.
        // The channels the last count that fitted used: a larger count needs as many or more,
        // so a probe tries them first (one lowering instead of the ladder's dozen), and only
        // more when they do not fit. Every example and 23 variants (`chunks: auto`, sizes, `k`,
        // box counts) chose the same count and channels as the full ladder at every count.
        let hint = std::cell::Cell::new(0u32);
        let probe =
            |c: u64| build_fixed(&with_count(c), opts, progress, c == 1, Mode::Probe(&hint));
        let first = probe(1)?;
        // The most chunks that fit and that the runtime selects wherever asked
        // ([`selectable`]); when one chunk is not selectable either, the most that fit.
        let selected = |w: &Vec<Diagnostic>| !w.iter().any(|w| w.code == Code::MscclUnselectable);
        let accept: &dyn Fn(&Vec<Diagnostic>) -> bool = if selected(&first.0) {
            &selected
        } else {
            &|_| true
        };
        let mut fitting = vec![1];
        // The channels the probe of each count in `fitting` found.
        let mut channels_of = vec![hint.get()];
        let mut fails = None;
        while fitting[fitting.len() - 1] < top {
            let c = (fitting[fitting.len() - 1] * 2).min(top);
            match probe(c) {
                Ok((w, _)) if accept(&w) => {
                    fitting.push(c);
                    channels_of.push(hint.get());
                }
                _ => {
                    fails = Some(c);
                    break;
                }
            }
        }
        // Bisect between the last count that fits and the first that does not.
        if let Some(mut hi) = fails {
            while hi - fitting[fitting.len() - 1] > 1 {
                let lo = fitting[fitting.len() - 1];
                let mid = lo + (hi - lo) / 2;
                match probe(mid) {
                    Ok((w, _)) if accept(&w) => {
                        fitting.push(mid);
                        channels_of.push(hint.get());
                    }
                    _ => hi = mid,
                }
            }
        }
        // The most that fit, built whole; should its written XML be refused (the rules hold in
        // memory, so it should not), the next most. Each is built with the fewest channels its
        // probe found, or more: fewer did not fit the count before it.
        let mut last = Vec::new();
        while let Some(c) = fitting.pop() {
            let from = channels_of.pop().unwrap_or(1).max(1);
            let built = build_fixed(&with_count(c), opts, progress, c == 1, Mode::Whole(from));
            match built {
                Ok((_, Some(mut e))) => {
                    if c < model_count {
                        capped(&mut e.warnings, c, opts);
                    }
                    return Ok(e);
                }
                Ok((_, None)) => {}
                Err(d) => last = d,
            }
        }
        return Err(last);
    }
    // A fixed count: E0045's `chunks: auto` means something else for MSCCL.
    let built = build_fixed(m, opts, progress, true, Mode::Whole(1))
        .and_then(|(_, e)| e.ok_or_else(Vec::new));
    built.map(|mut e| {
        for w in e
            .warnings
            .iter_mut()
            .filter(|w| w.code == Code::ForestChunksLose)
        {
            w.notes.push(format!(
                "for MSCCL, `chunks: auto` becomes the most chunks the executor runs ({} steps per thread block, {} channels), which may be far fewer",
                opts.max_steps,
                limits::MAX_CHANNELS
            ));
        }
        e
    })
}

/// E0045 under `chunks: auto` cut to `c` chunks for the executor: the model's count does not
/// fit, so the warning says why the count is `c` instead of asking for `chunks: auto`.
fn capped(warnings: &mut [Diagnostic], c: u64, opts: &Options) {
    for w in warnings
        .iter_mut()
        .filter(|w| w.code == Code::ForestChunksLose)
    {
        w.help = Some(format!(
            "for MSCCL, `chunks: auto` chose {c}: the most chunks that fit the executor's {} steps per thread block within its {} channels",
            opts.max_steps,
            limits::MAX_CHANNELS
        ));
    }
}

/// [`build_with`] for the model's schedule as written.
/// How far [`build_fixed`] goes.
enum Mode<'a> {
    /// The XML written, read back and executed ([`emit`]), under `channels: auto` with the
    /// fewest channels that fit from the count given up.
    Whole(u32),
    /// Only whether a channel count fits ([`fit`] in memory), trying the channel count in the
    /// cell first (under `channels: auto`) and leaving there the one that fitted.
    Probe(&'a std::cell::Cell<u32>),
}

/// Lowers and verifies `m`, then the best selectable plan that fits: its warnings and, for
/// [`Mode::Whole`], the XML; a probe makes none.
fn build_fixed(
    m: &Model,
    opts: &Options,
    progress: &dyn crate::progress::Progress,
    with_advice: bool,
    mode: Mode,
) -> Result<(Vec<Diagnostic>, Option<Emitted>), Vec<Diagnostic>> {
    let (program, _, warnings) = crate::lower::lower_and_verify_with(m, progress)?;
    progress.phase(crate::progress::Phase::Emit, None);
    let at = build_span(m);
    // The best choice the executor runs ([`selectable`]); the program as written when the
    // best is refined and does not fit (its problems are the ones to report).
    let plans = selectable::plan(&program, opts.instances, opts.min_bytes, opts.max_bytes);
    let cpp = program.spec.chunks_per_part;
    let mut tries: Vec<selectable::Plan> = plans.iter().take(TRIES).cloned().collect();
    if let Some(p) = plans.iter().find(|p| p.cpp == cpp) {
        if !tries.contains(p) {
            tries.push(p.clone());
        }
    }
    // When nothing fits, the problems of the program as written are the ones to report.
    let mut emitted = Err(Vec::new());
    // A probe skips a plan with at least as many chunks per part as one that did not fit:
    // refining keeps every op and step and only cuts the buffers finer ([`crate::ir::refine`]),
    // so the executor's limits on steps and thread blocks fail the same way.
    let mut unfit = u32::MAX;
    for plan in tries {
        if matches!(mode, Mode::Probe(_)) && plan.cpp >= unfit {
            continue;
        }
        let refined;
        let prog = if plan.cpp == cpp {
            &program
        } else {
            refined = crate::ir::refine::refine(&program, plan.cpp);
            &refined
        };
        let o = Options {
            min_bytes: plan.min_bytes,
            ..opts.clone()
        };
        let tried = if let Mode::Probe(hint) = mode {
            let hinted = (o.channels == AUTO_CHANNELS && hint.get() > 0)
                .then(|| {
                    fit(
                        prog,
                        &Options {
                            channels: hint.get(),
                            ..o.clone()
                        },
                    )
                })
                .and_then(Result::ok);
            // A larger count needs as many channels as the last that fitted, or more (and
            // the hinted count did not fit).
            let from = if hinted.is_none() && hint.get() > 0 {
                (hint.get() + 1).min(limits::MAX_CHANNELS)
            } else {
                1
            };
            hinted
                .map_or_else(|| choose_from(prog, &o, from), Ok)
                .map(|algo| {
                    hint.set(u32::try_from(algo.nchannels).unwrap_or(0));
                    let mut warnings = warnings.clone();
                    warnings.extend(selectable::warning(&plan, &algo, at));
                    (warnings, None)
                })
        } else {
            let from = match mode {
                Mode::Whole(from) => from,
                Mode::Probe(_) => 1,
            };
            emit_from(prog, &o, from).map(|e| {
                let mut warnings = warnings.clone();
                warnings.extend(selectable::warning(&plan, &e.algo, at));
                let e = Emitted {
                    warnings: warnings.clone(),
                    selection: Some(plan.clone()),
                    ..e
                };
                (warnings, Some(e))
            })
        };
        match tried {
            Ok(e) => {
                emitted = Ok(e);
                break;
            }
            Err(ps) if plan.cpp == cpp || emitted.as_ref().is_err_and(Vec::is_empty) => {
                unfit = unfit.min(plan.cpp);
                emitted = Err(ps)
            }
            Err(_) => unfit = unfit.min(plan.cpp),
        }
    }
    emitted.map_err(|mut ps| {
        // Over a limit: settings that fit, found by building them.
        if with_advice && ps.iter().any(|p| p.code == Code::MscclLimit) {
            let help = advice::advise(m, &program, opts);
            for p in ps.iter_mut().filter(|p| p.code == Code::MscclLimit) {
                p.help = help.clone();
            }
        }
        // All problems point at the same span: say each kind once (messages that differ only
        // in their numbers are one kind), with how often it occurs.
        let kind = |p: &Problem| {
            let m: String = p
                .message
                .chars()
                .map(|c| if c.is_ascii_digit() { '#' } else { c })
                .collect();
            (p.code, m)
        };
        let mut once: Vec<(&Problem, usize, bool)> = Vec::new();
        for p in &ps {
            match once.iter_mut().find(|(q, _, _)| kind(q) == kind(p)) {
                Some((q, n, same)) => {
                    *n += 1;
                    *same &= q.message == p.message;
                }
                None => once.push((p, 0, true)),
            }
        }
        once.into_iter()
            .map(|(p, more, same)| {
                let d = p.diagnostic(at);
                if more == 0 {
                    d
                } else {
                    d.note(format!(
                        "the same {} in {more} more place{} of the XML (at most 32 problems are listed)",
                        if same { "holds" } else { "limit is exceeded" },
                        if more == 1 { "" } else { "s" }
                    ))
                }
            })
            .collect()
    })
}

/// Lowers, writes, reads back, checks and symbolically executes; the XML text on success.
/// With [`AUTO_CHANNELS`], the fewest channels (at most 32) under which the XML fits: the
/// counts of `AUTO_TRIES` (1, 2, 3, 4, 5, 6, 8, ... 32) first, then, below the first that fits, the counts the ladder
/// skipped (so the answer is the fewest). When no rung fits, the skipped counts between the
/// widest rung that failed only on steps per thread block and the next rung (which failed on
/// something more channels bring, such as dependency ids) are tried: more channels mean
/// fewer steps per thread block, so a count in that window may fit. When none does, the
/// problems with the most channels tried (what does not fit even then). A count is tried by
/// [`fit`] (lowering and the executor's rules on the lowered XML, without writing it); only the
/// count chosen is written, read back and executed ([`finish`]).
pub fn emit(p: &Program, opts: &Options) -> Result<Emitted, Vec<Problem>> {
    emit_from(p, opts, 1)
}

/// [`emit`] with the channel counts from `from` up.
fn emit_from(p: &Program, opts: &Options, from: u32) -> Result<Emitted, Vec<Problem>> {
    finish(choose_from(p, opts, from)?, opts)
}

/// The lowered XML [`emit`] would write: the channel count chosen as it says among the counts
/// from `from` up, each count tried by [`fit`] alone.
fn choose_from(p: &Program, opts: &Options, from: u32) -> Result<Algo, Vec<Problem>> {
    if opts.channels != AUTO_CHANNELS {
        return fit(p, opts);
    }
    let with = |c: u32| {
        fit(
            p,
            &Options {
                channels: c,
                ..opts.clone()
            },
        )
    };
    let skipped =
        |r: std::ops::Range<u32>| -> Vec<u32> { r.filter(|c| !AUTO_TRIES.contains(c)).collect() };
    let fewest = |counts: &[u32]| {
        in_order(counts, &with, &|r| r.is_ok())
            .into_iter()
            .find_map(|(_, r)| r.ok())
    };
    let steps_only = |ps: &[Problem]| {
        ps.iter()
            .all(|x| x.message.contains(super::rules::TOO_MANY_STEPS))
    };
    // Only a limit can be met with more channels.
    let limit_only = |ps: &[Problem]| ps.iter().all(|x| x.code == Code::MscclLimit);
    let mut widest = None;
    let mut below = from;
    let mut window = None;
    let ladder: Vec<u32> = std::iter::once(from)
        .chain(AUTO_TRIES.iter().copied().filter(|c| *c > from))
        .collect();
    for (c, tried) in in_order(&ladder, &with, &|r| {
        r.as_ref().map_or_else(|ps| !limit_only(ps), |_| true)
    }) {
        match tried {
            // A count the ladder skipped may fit too.
            Ok(a) => return Ok(fewest(&skipped(below..c)).unwrap_or(a)),
            Err(ps) if limit_only(&ps) => {
                window = if steps_only(&ps) { Some(c) } else { window };
                widest = Some(ps);
                below = c + 1;
            }
            Err(ps) => return Err(ps),
        }
    }
    if let Some(w) = window {
        let next = AUTO_TRIES.iter().copied().find(|c| *c > w).unwrap_or(w);
        if let Some(a) = fewest(&skipped(w + 1..next)) {
            return Ok(a);
        }
    }
    Err(widest.unwrap_or_default())
}

/// What trying one channel count gave.
type Tried = Result<Algo, Vec<Problem>>;

/// `try_count` on `counts` in order, up to and including the first result `stop` accepts: the
/// results a one-by-one search sees, so the choice never depends on the thread count. Counts
/// are tried a batch at a time, as many at once as rayon has threads (a batch may try counts
/// past the stop, whose results are dropped).
fn in_order(
    counts: &[u32],
    try_count: &(dyn Fn(u32) -> Tried + Sync),
    stop: &(dyn Fn(&Tried) -> bool + Sync),
) -> Vec<(u32, Tried)> {
    use rayon::prelude::*;
    let mut seen = Vec::new();
    for batch in counts.chunks(rayon::current_num_threads().max(1)) {
        let tried: Vec<(u32, Tried)> = batch.par_iter().map(|&c| (c, try_count(c))).collect();
        for (c, t) in tried {
            let done = stop(&t);
            seen.push((c, t));
            if done {
                return seen;
            }
        }
    }
    seen
}

/// Lowers `p` to MSCCL under `opts` and checks the executor's rules ([`rules::check`]) on the
/// lowered XML as it is in memory: whether a setting fits, in milliseconds where writing,
/// reading back and executing a large XML takes seconds. What [`finish`] reads back is checked
/// by the same rules again, so a setting that passes here and not there is still refused.
fn fit(p: &Program, opts: &Options) -> Result<Algo, Vec<Problem>> {
    let algo = lower::lower(p, opts).map_err(|e| vec![e])?;
    let problems = rules::check(&algo, opts.max_steps);
    if problems.is_empty() {
        Ok(algo)
    } else {
        Err(problems)
    }
}

/// Writes `algo`, reads the text back, checks and symbolically executes it ([`validate`]).
fn finish(algo: Algo, opts: &Options) -> Result<Emitted, Vec<Problem>> {
    let text = write::write(&algo);
    let proof = validate(&text, algo.root, opts.max_steps)
        .map_err(|ps| ps.into_iter().map(|(p, _)| p).collect::<Vec<_>>())?;
    Ok(Emitted {
        algo,
        text,
        proof,
        warnings: Vec::new(),
        selection: None,
    })
}
