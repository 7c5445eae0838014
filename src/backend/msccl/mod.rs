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
//! [`check`] applies the same validation to an XML file from anywhere (`collc check FILE.xml`),
//! where an XML that is correct but not fully proved gets warnings ([`Verdict::Caveats`]):
//! ranks combining in different orders (E0052), a collective collc cannot execute (E0053:
//! alltoallv, send, recv, gather, scatter, custom).
//! [`validate`], for the XML collc writes itself, demands the full proof.
//! [`select`] states when the runtime would pick an XML for a call.

mod advice;
mod build;
pub mod exec;
pub mod lex;
pub mod lower;
pub mod read;
pub mod rules;
pub mod select;
pub mod selectable;
mod types;
pub mod write;

pub use build::{build, build_with, emit};
pub use types::{Algo, Gpu, MBuf, Proto, Step, StepType, Tb};

use crate::diag::{Code, Diagnostic, FileId, Span};
use crate::ir::{self, Program};
use crate::sema::model::{CollectiveKind, Model, ModelParam, TargetKind};

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
        CollectiveKind::Alltoall => Some("alltoall"),
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
        CollectiveKind::Alltoall,
    ]
    .into_iter()
    .find(|k| coll_name(*k) == Some(s))
}

/// The runtime's `sizeMultiplier`: nBytes = count * typesize * multiplier (`msccl_parser.cc`
/// sets it to ngpus for reducescatter, allgather and alltoall, whose `count` is per rank: an
/// all-to-all's `count` is what one rank sends each peer).
pub fn size_multiplier(k: CollectiveKind, ngpus: u64) -> u64 {
    match k {
        CollectiveKind::Allgather | CollectiveKind::ReduceScatter | CollectiveKind::Alltoall => {
            ngpus
        }
        _ => 1,
    }
}

/// `channels` when none was asked for: the fewest that fit ([`emit`] tries these counts).
pub const AUTO_CHANNELS: u32 = 0;

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
        o.proto = word("proto")
            .and_then(Proto::from_word)
            .unwrap_or(Proto::Simple);
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

    /// The problem as an error at `span`, naming the place in the XML in the label.
    pub fn diagnostic(&self, span: Span) -> Diagnostic {
        self.labelled(Diagnostic::error(self.code, span, self.message.clone()))
    }

    /// The problem as a warning at `span` (a caveat of [`Verdict::Caveats`]).
    pub fn warning(&self, span: Span) -> Diagnostic {
        self.labelled(Diagnostic::warning(self.code, span, self.message.clone()))
    }

    fn labelled(&self, d: Diagnostic) -> Diagnostic {
        let label = match self.at {
            At::Algo | At::Byte(_) => "in the XML".to_string(),
            At::Gpu(g) => format!("gpu {g}"),
            At::Tb(g, t) => format!("gpu {g}, tb {t}"),
            At::Step(g, t, s) => format!("gpu {g}, tb {t}, step {s}"),
        };
        d.label(label).help(self.help.clone())
    }
}

/// What a successful [`emit`] established.
#[derive(Debug, Clone)]
pub struct Emitted {
    pub algo: Algo,
    pub text: String,
    pub proof: ir::verify::Proof,
    /// Warnings from lowering (E0045) and selection (E0054), for [`build`]; [`emit`] leaves it
    /// empty.
    pub warnings: Vec<Diagnostic>,
    /// The chunk count and window [`build`] chose so that the runtime picks the XML
    /// ([`selectable`]); [`emit`] leaves it `None` (it writes the program as it is).
    pub selection: Option<selectable::Plan>,
}

/// A problem of an XML with the byte range of the text it is about.
pub type Located = (Problem, std::ops::Range<usize>);

/// What [`examine`] established about an XML in which it found no problem.
#[derive(Debug, Clone)]
pub enum Verdict {
    /// The executor accepts it, it cannot hang, and every mode it declares computes the
    /// collective, each rank combining in the same order.
    Proved(ir::verify::Proof),
    /// The executor accepts it and nothing in it is wrong, but collc did not prove all of it
    /// (never empty): ranks combine in different orders ([`Code::MscclOrder`]), or collc
    /// cannot execute its collective ([`Code::MscclUnverified`]).
    Caveats(Vec<Located>),
}

/// Reads, checks and executes an XML text, demanding a full proof (the XML collc writes):
/// problems, and caveats as problems, come with byte spans into `text`.
pub fn validate(
    text: &str,
    root: Option<u32>,
    max_steps: u32,
) -> Result<ir::verify::Proof, Vec<Located>> {
    validate_with(text, root, max_steps, crate::sema::elab::Limits::MAX_SLOTS)
}

/// [`validate`], refusing (E0046) an XML whose buffers would need more than `max_slots` slots in
/// all to execute symbolically, before they are allocated.
pub fn validate_with(
    text: &str,
    root: Option<u32>,
    max_steps: u32,
    max_slots: u64,
) -> Result<ir::verify::Proof, Vec<Located>> {
    match examine(text, root, max_steps, max_slots)? {
        Verdict::Proved(p) => Ok(p),
        Verdict::Caveats(c) => Err(c),
    }
}

/// Reads, checks and executes an XML text: the problems (with byte spans into `text`), or what
/// was established, a proof or caveats. Every rule of the reader, parser and kernel applies to
/// every `coll`; the symbolic execution (and its E0046 bound) to those collc executes.
pub fn examine(
    text: &str,
    root: Option<u32>,
    max_steps: u32,
    max_slots: u64,
) -> Result<Verdict, Vec<Located>> {
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
    if coll_kind(&algo.coll).is_some() {
        if let Some(p) = rules::too_large(&algo, max_slots) {
            return Err(vec![locate(p)]);
        }
    }
    match exec::verify(&algo) {
        Ok(exec::Outcome::Proved(p)) => Ok(Verdict::Proved(p)),
        Ok(exec::Outcome::Caveats(c)) => Ok(Verdict::Caveats(c.into_iter().map(locate).collect())),
        Err(ps) => Err(ps.into_iter().map(locate).collect()),
    }
}

/// `collc check FILE.xml`: every problem of an XML file as an error, and its caveats
/// ([`Verdict::Caveats`]) as warnings.
pub fn check(file: FileId, text: &str) -> Vec<Diagnostic> {
    check_with(file, text, crate::sema::elab::Limits::MAX_SLOTS, false)
}

/// [`check`] with at most `max_slots` buffer slots (`--max-slots`); `strict`
/// (`collc check --strict`) makes the caveats errors.
pub fn check_with(file: FileId, text: &str, max_slots: u64, strict: bool) -> Vec<Diagnostic> {
    let span = |r: std::ops::Range<usize>| Span::new(file, r.start, r.end);
    match examine(text, None, limits::MAX_STEPS, max_slots) {
        Ok(Verdict::Proved(_)) => Vec::new(),
        Ok(Verdict::Caveats(c)) => c
            .into_iter()
            .map(|(p, r)| {
                if strict {
                    p.diagnostic(span(r))
                } else {
                    p.warning(span(r))
                }
            })
            .collect(),
        Err(ps) => ps.into_iter().map(|(p, r)| p.diagnostic(span(r))).collect(),
    }
}
