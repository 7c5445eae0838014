//! MSCCL XML (MSCCL-IR) for the current msccl-executor-nccl runtime
//! (../shared/reference/msccl-xml.md): the XML data structure ([`Algo`]), the limits of the
//! executor, and the pipeline `collc build --target msccl` runs.
//!
//! [`emit`] lowers a verified [`ir::Program`] into thread blocks, channels and steps
//! ([`lower`]), writes the text the executor's hand-written reader accepts ([`write`]), then
//! validates that very text before anyone sees it: reads it back with quick-xml ([`read`]),
//! checks every parser rule, limit and runtime rule ([`rules`]), and executes it symbolically
//! with the same verifier as the IR ([`exec`] turns it back into an [`ir::Program`] whose
//! dependency graph is the executor's: steps of a thread block in order, `depid`/`deps`
//! waits, sends paired FIFO with receives per (sender, receiver, channel)). A cycle in that
//! graph is a hang of the kernel; a wrong result or duplicated contribution is a wrong XML.
//! [`check`] applies the same validation to an XML file from anywhere (`collc check FILE.xml`).
//! [`select`] states when the runtime would pick an XML for a call.

mod advice;
pub mod exec;
pub mod lex;
pub mod lower;
pub mod read;
pub mod rules;
pub mod select;
mod types;
pub mod write;

pub use types::{Algo, Gpu, MBuf, Proto, Step, StepType, Tb};

use crate::diag::{Code, Diagnostic, FileId, Span};
use crate::ir::{self, Program};
use crate::sema::model::{AutoOr, CollectiveKind, Family, Model, ModelParam, TargetKind};

/// Executor limits (msccl-xml.md section 1.5) and field widths (`msccl_struct.h`).
pub mod limits {
    /// Steps per thread block (`MSCCL_MAX_NUM_STEPS`, build-time, default 64).
    pub const MAX_STEPS: u32 = 64;
    /// Channels (`MAXCHANNELS`; the parser's check is off by one, so 32 itself is refused).
    pub const MAX_CHANNELS: u32 = 32;
    /// Thread blocks with a send peer (and with a receive peer) per channel.
    pub const MAX_TBS_PER_CHANNEL: u32 = 32;
    /// Thread blocks per GPU (`MSCCL_MAX_NUM_THREAD_BLOCKS`).
    pub const MAX_TBS: u32 = 1024;
    /// `cnt` is below this (`MSCCL_MAX_COUNT`).
    pub const MAX_COUNT: u32 = 72;
    /// `depid` is an int8 (`dependentBid`).
    pub const MAX_DEPID: u32 = 127;
    /// Offsets are int16.
    pub const MAX_OFFSET: u32 = 32767;
    /// Parsed nodes per rank (`MAX_NODES`): the algo, every gpu, own tbs and own steps.
    pub const MAX_NODES: u32 = 4096;
    /// Children per element (`MAX_SUBS`; the reader does not check it and overflows).
    pub const MAX_SUBS: u32 = 1024;
    /// Attribute names and values (`MAX_STR_LEN`).
    pub const MAX_STR_LEN: usize = 255;
}

/// The `coll` name of a collective, or None when MSCCL has no such collective.
pub fn coll_name(k: CollectiveKind) -> Option<&'static str> {
    match k {
        CollectiveKind::Allreduce => Some("allreduce"),
        CollectiveKind::Allgather => Some("allgather"),
        CollectiveKind::ReduceScatter => Some("reducescatter"),
        CollectiveKind::Broadcast => Some("broadcast"),
        CollectiveKind::Reduce => Some("reduce"),
        CollectiveKind::Barrier => None,
    }
}

/// The collective a `coll` name means, for the ones collc can verify.
pub fn coll_kind(s: &str) -> Option<CollectiveKind> {
    [
        CollectiveKind::Allreduce,
        CollectiveKind::Allgather,
        CollectiveKind::ReduceScatter,
        CollectiveKind::Broadcast,
        CollectiveKind::Reduce,
    ]
    .into_iter()
    .find(|k| coll_name(*k) == Some(s))
}

/// The runtime's `sizeMultiplier`: nBytes = count * typesize * multiplier.
pub fn size_multiplier(k: CollectiveKind, ngpus: u64) -> u64 {
    match k {
        CollectiveKind::Allgather | CollectiveKind::ReduceScatter => ngpus,
        _ => 1,
    }
}

/// `channels` when none was asked for: the fewest that fit ([`emit`] tries these counts).
pub const AUTO_CHANNELS: u32 = 0;

/// Up to this many ranks, an E0040 for too many ranks checks that the `mpi` target builds the
/// schedule before naming it.
const MPI_CHECK_RANKS: usize = 16384;

/// The channel counts `channels: auto` tries, in order.
const AUTO_TRIES: &[u32] = &[1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32];

/// What `collc build --target msccl` is asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub proto: Proto,
    /// Channels to spread messages over (`lower::order`): a forwarded chunk keeps its channel,
    /// other messages take the least used; more when a channel would hold more thread blocks
    /// than the executor allows. `nchannels` is the number actually used. 0 (the default,
    /// [`AUTO_CHANNELS`]): the fewest channels under which the XML fits the executor.
    pub channels: u32,
    /// Parallel copies of the whole schedule, each on its own channels and sub-chunks.
    pub instances: u32,
    pub inplace: bool,
    pub min_bytes: u64,
    /// 0: no upper limit.
    pub max_bytes: u64,
    /// Steps per thread block the target runtime was built with (`MSCCL_MAX_NUM_STEPS`).
    pub max_steps: u32,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            proto: Proto::Simple,
            channels: AUTO_CHANNELS,
            instances: 1,
            inplace: false,
            min_bytes: 0,
            max_bytes: 0,
            max_steps: limits::MAX_STEPS,
        }
    }
}

impl Options {
    /// The options of `m`'s `target msccl` block (defaults where absent), without flags.
    pub fn from_model(m: &Model) -> Options {
        let block = m.targets.iter().find(|t| t.kind == TargetKind::Msccl);
        Options::new(&block.map(|t| t.options.clone()).unwrap_or_default())
    }

    /// The options from the values of a `target msccl` block (with the command
    /// line's overrides: `proto`, `channels`, `instances`, `inplace`, `min_bytes`, `max_bytes`,
    /// `max_steps`), defaults where absent (`channels`: [`AUTO_CHANNELS`]).
    pub fn new(values: &std::collections::BTreeMap<String, ModelParam>) -> Options {
        let mut o = Options::default();
        // Counts and sizes (in bytes, their base unit), as the checker stored them.
        let number = |k: &str| match values.get(k) {
            Some(ModelParam::Quantity(q)) if q.value.is_integer() => {
                num_traits::ToPrimitive::to_u64(&q.value.to_integer())
            }
            _ => None,
        };
        let count = |k: &str| number(k).and_then(|v| u32::try_from(v).ok());
        let word = |k: &str| match values.get(k) {
            Some(ModelParam::Word(w)) => Some(w.as_str()),
            _ => None,
        };
        o.channels = count("channels").unwrap_or(o.channels);
        o.instances = count("instances").unwrap_or(o.instances);
        o.inplace = word("inplace") == Some("true");
        o.proto = match word("proto") {
            Some("ll") => Proto::LL,
            Some("ll128") => Proto::LL128,
            _ => Proto::Simple,
        };
        o.min_bytes = number("min_bytes").unwrap_or(o.min_bytes);
        o.max_bytes = number("max_bytes").unwrap_or(o.max_bytes);
        o.max_steps = count("max_steps").unwrap_or(o.max_steps);
        o
    }
}

/// Where build-time problems are reported: the `target msccl` block, else the schedule.
pub fn build_span(m: &Model) -> Span {
    m.build_span(Some(TargetKind::Msccl))
}

/// `collc build --target msccl`: lowers and verifies `m`'s schedule, then [`emit`]s it; every
/// problem as a diagnostic at [`build_span`]. A schedule over an executor limit gets advice
/// ([`advice`]): settings that fit, found by building them.
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
        let model_count = advice::lowered_chunks(m, k, AutoOr::Auto);
        let top = model_count.min(u64::from(opts.max_steps)).max(1);
        let try_count = |c: u64| {
            let mut fixed = m.clone();
            if let Some(s) = fixed.schedule.as_mut() {
                s.family = Family::Forest {
                    k,
                    chunks: AutoOr::Fixed(c),
                };
            }
            // Only the error of one chunk is shown (with advice); the others are dropped.
            build_fixed(&fixed, opts, progress, c == 1)
        };
        let mut best = match try_count(1) {
            Ok(e) => (1, e),
            err => return err,
        };
        let mut fails = None;
        while best.0 < top {
            let c = (best.0 * 2).min(top);
            match try_count(c) {
                Ok(e) => best = (c, e),
                Err(_) => {
                    fails = Some(c);
                    break;
                }
            }
        }
        // Bisect between the last count that fits and the first that does not.
        if let Some(mut hi) = fails {
            while hi - best.0 > 1 {
                let mid = best.0 + (hi - best.0) / 2;
                match try_count(mid) {
                    Ok(e) => best = (mid, e),
                    Err(_) => hi = mid,
                }
            }
        }
        let (c, mut e) = best;
        if c < model_count {
            capped(&mut e.warnings, c, opts);
        }
        return Ok(e);
    }
    build_fixed(m, opts, progress, true)
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
fn build_fixed(
    m: &Model,
    opts: &Options,
    progress: &dyn crate::progress::Progress,
    with_advice: bool,
) -> Result<Emitted, Vec<Diagnostic>> {
    let (program, _, warnings) = crate::lower::lower_and_verify_with(m, progress)?;
    progress.phase(crate::progress::Phase::Emit, None);
    let at = build_span(m);
    let mut warnings = warnings;
    if with_advice {
        for w in warnings
            .iter_mut()
            .filter(|w| w.code == Code::ForestChunksLose)
        {
            w.notes.push(format!(
                "for MSCCL, `chunks: auto` becomes the most chunks the executor runs ({} steps per thread block, {} channels), which may be far fewer",
                opts.max_steps,
                limits::MAX_CHANNELS
            ));
        }
    }
    let emitted = emit(&program, opts).map(|e| Emitted { warnings, ..e });
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

/// A problem with an XML: which rule, where, and what to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// [`Code::MscclLimit`], [`Code::MscclInvalid`] or [`Code::TargetUnsupported`].
    pub code: Code,
    pub at: At,
    pub message: String,
    pub help: String,
}

/// Where in an XML a problem is: the whole file, a gpu, a tb or a step (indices).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum At {
    Algo,
    Gpu(usize),
    Tb(usize, usize),
    Step(usize, usize, usize),
    /// A byte offset of the text (lexical problems).
    Byte(usize),
}

impl Problem {
    pub fn new(code: Code, at: At, message: impl Into<String>, help: impl Into<String>) -> Self {
        Problem {
            code,
            at,
            message: message.into(),
            help: help.into(),
        }
    }

    /// The problem as a diagnostic at `span`, naming the place in the XML in the label.
    pub fn diagnostic(&self, span: Span) -> Diagnostic {
        let label = match self.at {
            At::Algo | At::Byte(_) => "in the XML".to_string(),
            At::Gpu(g) => format!("gpu {g}"),
            At::Tb(g, t) => format!("gpu {g}, tb {t}"),
            At::Step(g, t, s) => format!("gpu {g}, tb {t}, step {s}"),
        };
        Diagnostic::error(self.code, span, self.message.clone())
            .label(label)
            .help(self.help.clone())
    }
}

/// What a successful [`emit`] established.
#[derive(Debug, Clone)]
pub struct Emitted {
    pub algo: Algo,
    pub text: String,
    pub proof: ir::verify::Proof,
    /// Warnings from lowering (E0045), for [`build`]; [`emit`] leaves it empty.
    pub warnings: Vec<Diagnostic>,
}

/// Lowers, writes, reads back, checks and symbolically executes; the XML text on success.
/// With [`AUTO_CHANNELS`], the fewest channels (at most 32) under which the XML fits: the
/// counts of [`AUTO_TRIES`] first, then, below the first that fits, the counts the ladder
/// skipped (so the answer is the fewest). When no rung fits, the skipped counts between the
/// widest rung that failed only on steps per thread block and the next rung (which failed on
/// something more channels bring, such as dependency ids) are tried: more channels mean
/// fewer steps per thread block, so a count in that window may fit. When none does, the
/// problems with the most channels tried (what does not fit even then).
pub fn emit(p: &Program, opts: &Options) -> Result<Emitted, Vec<Problem>> {
    if opts.channels != AUTO_CHANNELS {
        return emit_fixed(p, opts);
    }
    let with = |c: u32| {
        emit_fixed(
            p,
            &Options {
                channels: c,
                ..opts.clone()
            },
        )
    };
    let skipped = |r: std::ops::Range<u32>| r.filter(|c| !AUTO_TRIES.contains(c));
    let steps_only = |ps: &[Problem]| {
        ps.iter()
            .all(|x| x.message.contains("steps in one thread block"))
    };
    let mut widest = None;
    let mut below = 1;
    let mut window = None;
    for &c in AUTO_TRIES {
        match with(c) {
            Ok(e) => {
                // A count the ladder skipped may fit too.
                for s in skipped(below..c) {
                    if let Ok(e) = with(s) {
                        return Ok(e);
                    }
                }
                return Ok(e);
            }
            // Only a limit can be met with more channels.
            Err(ps) if ps.iter().all(|x| x.code == Code::MscclLimit) => {
                window = if steps_only(&ps) { Some(c) } else { window };
                widest = Some(ps);
                below = c + 1;
            }
            Err(ps) => return Err(ps),
        }
    }
    if let Some(w) = window {
        let next = AUTO_TRIES.iter().copied().find(|c| *c > w).unwrap_or(w);
        for s in skipped(w + 1..next) {
            if let Ok(e) = with(s) {
                return Ok(e);
            }
        }
    }
    Err(widest.unwrap_or_default())
}

/// [`emit`] with the channel count fixed.
fn emit_fixed(p: &Program, opts: &Options) -> Result<Emitted, Vec<Problem>> {
    let algo = lower::lower(p, opts).map_err(|e| vec![e])?;
    let text = write::write(&algo);
    let proof = validate(&text, algo.root, opts.max_steps)
        .map_err(|ps| ps.into_iter().map(|(p, _)| p).collect::<Vec<_>>())?;
    Ok(Emitted {
        algo,
        text,
        proof,
        warnings: Vec::new(),
    })
}

/// Reads, checks and executes an XML text; problems come with byte spans into `text`.
#[allow(clippy::type_complexity)]
pub fn validate(
    text: &str,
    root: Option<u32>,
    max_steps: u32,
) -> Result<ir::verify::Proof, Vec<(Problem, std::ops::Range<usize>)>> {
    validate_with(text, root, max_steps, crate::sema::elab::Limits::MAX_SLOTS)
}

/// [`validate`], refusing (E0046) an XML whose buffers would need more than `max_slots` slots in
/// all to execute symbolically, before they are allocated.
#[allow(clippy::type_complexity)]
pub fn validate_with(
    text: &str,
    root: Option<u32>,
    max_steps: u32,
    max_slots: u64,
) -> Result<ir::verify::Proof, Vec<(Problem, std::ops::Range<usize>)>> {
    let (mut algo, spans) = read::read(text).map_err(|p| {
        let r = match p.at {
            At::Byte(b) => b..b,
            _ => 0..0,
        };
        vec![(p, r)]
    })?;
    algo.root = root;
    let locate = |p: Problem| {
        let r = spans.range(p.at);
        (p, r)
    };
    let problems = rules::check(&algo, max_steps);
    if !problems.is_empty() {
        return Err(problems.into_iter().map(locate).collect());
    }
    if let Some(p) = rules::too_large(&algo, max_slots) {
        return Err(vec![locate(p)]);
    }
    exec::verify(&algo).map_err(|ps| ps.into_iter().map(locate).collect())
}

/// `collc check FILE.xml`: every problem of an XML file as a diagnostic.
pub fn check(file: FileId, text: &str) -> Vec<Diagnostic> {
    check_with(file, text, crate::sema::elab::Limits::MAX_SLOTS)
}

/// [`check`] with at most `max_slots` buffer slots (`--max-slots`).
pub fn check_with(file: FileId, text: &str, max_slots: u64) -> Vec<Diagnostic> {
    match validate_with(text, None, limits::MAX_STEPS, max_slots) {
        Ok(_) => Vec::new(),
        Err(ps) => ps
            .into_iter()
            .map(|(p, r)| p.diagnostic(Span::new(file, r.start, r.end)))
            .collect(),
    }
}
