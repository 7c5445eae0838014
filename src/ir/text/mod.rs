//! The textual form of the IR (`collc build FILE --emit ir`), and its parser. Printing then
//! parsing gives back the same [`Program`]; the parser also returns the span of every op so the
//! verifier's findings point into the text.
//!
//! ```text
//! collc-ir 1
//! name "recursive_doubling"
//! collective allreduce ranks 2 part_elements 4 chunks_per_part 1 dtype f32 op sum
//! proc 0 rank scratch 1 {
//!   0: send in[0] -> 1 tag 0
//!   1: recv scratch[0] <- 1 tag 0
//!   2: copy out[0] <- in[0]
//!   3: reduce out[0] += scratch[0] after 1, 2
//! }
//! ```
//! Slices are `buf[k]` or `buf[a..b]` (half open); `recv_reduce out[0] <- 1` receives and
//! combines; a broadcast or reduce names its `root` after `op`; switches are
//! `proc 5 switch "leaf[0]" scratch 4 { ... }`.

use super::{Op, OpKind, Proc, ProcKind, Program, Slice, Spec};
use crate::diag::{Code, Diagnostic, FileId, Span};
use crate::sema::model::{CollectiveKind, Dtype, ReduceOp};
use std::fmt::Write;

mod lex;
use lex::Lexer;

fn slice(s: Slice) -> String {
    if s.count == 1 {
        format!("{}[{}]", s.buf.name(), s.start)
    } else {
        format!("{}[{}..{}]", s.buf.name(), s.start, s.start + s.count)
    }
}

/// Prints a program in the textual form.
pub fn print(p: &Program) -> String {
    let mut s = String::new();
    let sp = &p.spec;
    let _ = writeln!(s, "collc-ir 1");
    let _ = writeln!(s, "name {:?}", p.name);
    let _ = write!(
        s,
        "collective {} ranks {} part_elements {} chunks_per_part {} dtype {} op {}",
        sp.kind.name(),
        sp.ranks,
        sp.part_elements,
        sp.chunks_per_part,
        sp.dtype.name(),
        sp.op.name()
    );
    if let Some(r) = sp.root {
        let _ = write!(s, " root {r}");
    }
    s.push('\n');
    for (i, proc) in p.procs.iter().enumerate() {
        match &proc.kind {
            ProcKind::Rank => {
                let _ = writeln!(s, "proc {i} rank scratch {} {{", proc.scratch);
            }
            ProcKind::Switch(name) => {
                let _ = writeln!(s, "proc {i} switch {name:?} scratch {} {{", proc.scratch);
            }
        }
        for (j, op) in proc.ops.iter().enumerate() {
            let _ = write!(s, "  {j}: ");
            let _ = match &op.kind {
                OpKind::Send { peer, src, tag } => {
                    write!(s, "send {} -> {peer} tag {tag}", slice(*src))
                }
                OpKind::Recv { peer, dst, tag } => {
                    write!(s, "recv {} <- {peer} tag {tag}", slice(*dst))
                }
                OpKind::RecvReduce { peer, dst, tag } => {
                    write!(s, "recv_reduce {} <- {peer} tag {tag}", slice(*dst))
                }
                OpKind::Reduce { dst, src } => {
                    write!(s, "reduce {} += {}", slice(*dst), slice(*src))
                }
                OpKind::Copy { dst, src } => write!(s, "copy {} <- {}", slice(*dst), slice(*src)),
            };
            if !op.deps.is_empty() {
                let deps: Vec<String> = op.deps.iter().map(|d| d.to_string()).collect();
                let _ = write!(s, " after {}", deps.join(", "));
            }
            s.push('\n');
        }
        s.push_str("}\n");
    }
    s
}

/// A parsed program with the span of every op (`op_spans[proc][op]`).
pub struct Parsed {
    pub program: Program,
    pub op_spans: Vec<Vec<Span>>,
    pub proc_spans: Vec<Span>,
}

fn lookup<T: Copy>(table: &[(&str, T)], w: &str) -> Option<T> {
    table.iter().find(|(n, _)| *n == w).map(|(_, v)| *v)
}

/// Parses the textual form. Stops at the first error (IR text is machine-written).
pub fn parse(file: FileId, src: &str) -> Result<Parsed, Diagnostic> {
    parse_with(file, src, crate::sema::elab::Limits::MAX_SLOTS)
}

/// [`parse`], refusing (E0046) a program whose buffers hold more than `max_slots` slots in all,
/// before anything is allocated for them: a 300-byte file can ask for billions.
pub fn parse_with(file: FileId, src: &str, max_slots: u64) -> Result<Parsed, Diagnostic> {
    let mut lines = Vec::new();
    let mut off = 0;
    for l in src.split_inclusive('\n') {
        let body = l.trim_end_matches(['\n', '\r']);
        let trimmed = body.split("//").next().unwrap_or("");
        lines.push((off, trimmed));
        off += l.len();
    }
    let mut it = lines.into_iter().filter(|(_, l)| !l.trim().is_empty());
    let eof = Span::new(file, src.len(), src.len());
    let missing = |what: &str| {
        Diagnostic::error(Code::IrSyntax, eof, format!("the IR text ends before {what}"))
            .label("unexpected end")
            .help("an IR file has a `collc-ir 1` line, a `name` line, a `collective` line and one `proc` block per process")
    };
    let (o, l) = it
        .next()
        .ok_or_else(|| missing("the `collc-ir 1` header"))?;
    let mut lx = Lexer::new(file, o, l);
    lx.keyword("collc-ir")?;
    lx.keyword("1")?;
    lx.end()?;
    let (o, l) = it.next().ok_or_else(|| missing("the `name` line"))?;
    let mut lx = Lexer::new(file, o, l);
    lx.keyword("name")?;
    let name = lx.string("a quoted name")?;
    lx.end()?;
    let (o, l) = it.next().ok_or_else(|| missing("the `collective` line"))?;
    let mut lx = Lexer::new(file, o, l);
    lx.keyword("collective")?;
    let k = lx.word("a collective kind")?;
    let kind = lookup(CollectiveKind::ALL, k).ok_or_else(|| {
        lx.pos -= 1;
        lx.err(
            "a collective kind (allreduce, allgather, reduce_scatter, broadcast, reduce, barrier)",
        )
    })?;
    lx.keyword("ranks")?;
    let ranks: u32 = lx.int("the rank count")?;
    lx.keyword("part_elements")?;
    let part_elements: u64 = lx.int("the elements per part")?;
    lx.keyword("chunks_per_part")?;
    let chunks_per_part: u32 = lx.int("the chunks per part")?;
    lx.keyword("dtype")?;
    let d = lx.word("a dtype")?;
    let dtype = lookup(Dtype::ALL, d).ok_or_else(|| {
        lx.pos -= 1;
        lx.err("a dtype")
    })?;
    lx.keyword("op")?;
    let o2 = lx.word("a reduction op")?;
    let op = lookup(ReduceOp::ALL, o2).ok_or_else(|| {
        lx.pos -= 1;
        lx.err("a reduction op")
    })?;
    let root = if lx.peek() == Some("root") {
        lx.pos += 1;
        Some(lx.int("the root rank")?)
    } else {
        None
    };
    lx.end()?;
    if chunks_per_part == 0 {
        return Err(Diagnostic::error(
            Code::IrSyntax,
            Span::new(file, o, o + l.len()),
            "chunks_per_part must be at least 1",
        )
        .label("zero chunks")
        .help("every part has at least one chunk"));
    }
    let spec = Spec {
        kind,
        ranks,
        part_elements,
        chunks_per_part,
        dtype,
        op,
        root,
    };
    let mut procs = Vec::new();
    let mut op_spans = Vec::new();
    let mut proc_spans = Vec::new();
    let rank_slots = (u64::from(spec.input_parts()) + u64::from(spec.output_parts()))
        * u64::from(spec.chunks_per_part);
    let mut slots = 0u64;
    while let Some((o, l)) = it.next() {
        let mut lx = Lexer::new(file, o, l);
        let head = Span::new(file, o, o + l.len());
        lx.keyword("proc")?;
        let id: usize = lx.int("the process number")?;
        if id != procs.len() {
            lx.pos -= 1;
            return Err(lx.err(&format!("process number {}", procs.len())));
        }
        let kind = match lx.word("`rank` or `switch`")? {
            "rank" => ProcKind::Rank,
            "switch" => ProcKind::Switch(lx.string("the switch's quoted name")?),
            _ => {
                lx.pos -= 1;
                return Err(lx.err("`rank` or `switch`"));
            }
        };
        lx.keyword("scratch")?;
        let scratch: u32 = lx.int("the scratch slot count")?;
        lx.keyword("{")?;
        lx.end()?;
        let mine = u64::from(scratch)
            + if kind == ProcKind::Rank {
                rank_slots
            } else {
                0
            };
        slots = slots.saturating_add(mine);
        if slots > max_slots || mine - u64::from(scratch) > u64::from(u32::MAX) / 2 {
            return Err(too_many_slots(head, &spec, id, scratch, slots, max_slots));
        }
        let mut ops = Vec::new();
        let mut spans = Vec::new();
        loop {
            let (o, l) = it
                .next()
                .ok_or_else(|| missing("the `}` closing a process"))?;
            let mut lx = Lexer::new(file, o, l);
            if lx.peek() == Some("}") {
                lx.pos += 1;
                lx.end()?;
                break;
            }
            let n: usize = lx.int("an op number such as `0:`")?;
            if n != ops.len() {
                lx.pos -= 1;
                return Err(lx.err(&format!("op number {}", ops.len())));
            }
            let verb = lx.word("an op")?;
            let kind = match verb {
                "send" => {
                    let src = lx.slice()?;
                    lx.keyword("->")?;
                    let peer = lx.int("a process number")?;
                    lx.keyword("tag")?;
                    OpKind::Send {
                        peer,
                        src,
                        tag: lx.int("a tag")?,
                    }
                }
                "recv" | "recv_reduce" => {
                    let dst = lx.slice()?;
                    lx.keyword("<-")?;
                    let peer = lx.int("a process number")?;
                    lx.keyword("tag")?;
                    let tag = lx.int("a tag")?;
                    if verb == "recv" {
                        OpKind::Recv { peer, dst, tag }
                    } else {
                        OpKind::RecvReduce { peer, dst, tag }
                    }
                }
                "reduce" => {
                    let dst = lx.slice()?;
                    lx.keyword("+=")?;
                    OpKind::Reduce {
                        dst,
                        src: lx.slice()?,
                    }
                }
                "copy" => {
                    let dst = lx.slice()?;
                    lx.keyword("<-")?;
                    OpKind::Copy {
                        dst,
                        src: lx.slice()?,
                    }
                }
                _ => {
                    lx.pos -= 1;
                    return Err(lx.err("an op (send, recv, recv_reduce, reduce, copy)"));
                }
            };
            let mut deps = super::Deps::new();
            if lx.peek() == Some("after") {
                lx.pos += 1;
                while lx.peek().is_some() {
                    deps.push(lx.int("an op number")?);
                }
                if deps.is_empty() {
                    return Err(lx.err("at least one op number after `after`"));
                }
            }
            lx.end()?;
            ops.push(Op { kind, deps });
            let lead = l.len() - l.trim_start().len();
            spans.push(Span::new(file, o + lead, o + l.trim_end().len()));
        }
        procs.push(Proc { kind, scratch, ops });
        op_spans.push(spans);
        proc_spans.push(head);
    }
    Ok(Parsed {
        program: Program {
            name,
            spec,
            procs,
            any_layout: false,
        },
        op_spans,
        proc_spans,
    })
}

/// E0046 for a program whose buffers reach `slots` slots by process `id`.
fn too_many_slots(
    head: Span,
    spec: &Spec,
    id: usize,
    scratch: u32,
    slots: u64,
    max_slots: u64,
) -> Diagnostic {
    Diagnostic::error(
        Code::ProgramTooLarge,
        head,
        format!(
            "the buffers of processes 0 to {id} hold {slots} slots, more than the limit of {max_slots}"
        ),
    )
    .label(format!("scratch {scratch}, and {} chunks per part on {} ranks", spec.chunks_per_part, spec.ranks))
    .help(format!(
        "check `chunks_per_part` and the `scratch` counts; if the size is intended, raise the limit with `--max-slots {}`",
        slots.saturating_add(1).checked_next_power_of_two().unwrap_or(u64::MAX)
    ))
}
