//! Reads MSCCL XML with quick-xml, under the lexical rules of msccl-executor-nccl's
//! hand-written reader (msccl-xml.md section 1.3), which is stricter than XML: no `<?xml?>`
//! prolog or other processing instruction, `<algo>` as the first element (comments before it
//! are fine), only spaces, `\n` and `\r` between elements (no tabs, no text), every start tag on
//! one line with attributes separated by single spaces and values in double quotes, at most 16
//! attributes per element and 255 characters per name or value. quick-xml checks that the
//! document is well formed; [`super::lex::strict_tag`] checks the reader's tag syntax on the raw bytes.
//!
//! Elements the executor skips (unknown children, such as TACCL's `<copy>`) and attributes it
//! does not read (`redop`, `nthreads`, ...) are accepted and ignored. Attribute values are taken
//! raw, as the executor does (it does not expand entities). The tag syntax is [`super::lex`]'s.

use super::{Algo, At, Gpu, MBuf, Problem, Proto, Step, StepType, Tb};
use crate::diag::Code;
use quick_xml::events::{BytesStart, Event};
use std::ops::Range;

/// Byte ranges of every start tag, for diagnostics.
#[derive(Debug, Default)]
pub struct Spans {
    algo: (u32, u32),
    gpus: Vec<(u32, u32)>,
    /// Per gpu: index of its first tb in `tbs`.
    tb_first: Vec<u32>,
    tbs: Vec<(u32, u32)>,
    /// Per flat tb: index of its first step in `steps`.
    step_first: Vec<u32>,
    steps: Vec<(u32, u32)>,
}

impl Spans {
    pub fn range(&self, at: At) -> Range<usize> {
        let r = |x: Option<&(u32, u32)>| x.map_or(0..0, |x| x.0 as usize..x.1 as usize);
        match at {
            At::Algo => r(Some(&self.algo)),
            At::Byte(b) => b..b,
            At::Gpu(g) => r(self.gpus.get(g)),
            At::Tb(g, t) => {
                let ft = self.tb_first.get(g).map_or(usize::MAX, |x| *x as usize + t);
                r(self.tbs.get(ft))
            }
            At::Step(g, t, s) => {
                let ft = self.tb_first.get(g).map_or(usize::MAX, |x| *x as usize + t);
                let fs = self
                    .step_first
                    .get(ft)
                    .map_or(usize::MAX, |x| *x as usize + s);
                r(self.steps.get(fs))
            }
        }
    }
}

fn bad(at: usize, message: impl Into<String>, help: &str) -> Problem {
    Problem::new(Code::MscclInvalid, At::Byte(at), message, help)
}

struct Attrs<'a, 'e> {
    v: Vec<(&'e [u8], std::borrow::Cow<'e, [u8]>)>,
    elem: &'a str,
    at: usize,
}

impl Attrs<'_, '_> {
    fn str(&self, name: &str) -> Result<&str, Problem> {
        let v = self
            .v
            .iter()
            .find(|(k, _)| *k == name.as_bytes())
            .ok_or_else(|| {
                Problem::new(
                    Code::MscclInvalid,
                    At::Byte(self.at),
                    format!(
                        "attribute {name} of node {} not found (the executor's init fails)",
                        self.elem
                    ),
                    format!(
                        "every <{}> needs `{name}`; see `collc explain E0041`",
                        self.elem
                    ),
                )
            })?;
        std::str::from_utf8(&v.1).map_err(|_| {
            bad(
                self.at,
                format!("attribute {name} is not UTF-8"),
                "write attribute values in ASCII",
            )
        })
    }

    fn int(&self, name: &str) -> Result<i64, Problem> {
        let s = self.str(name)?;
        s.parse::<i64>().map_err(|_| {
            bad(
                self.at,
                format!(
                    "attribute {name}=\"{s}\" of node {} is not an integer",
                    self.elem
                ),
                "write a decimal integer",
            )
        })
    }

    fn flag(&self, name: &str) -> Result<bool, Problem> {
        match self.int(name)? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(bad(
                self.at,
                format!(
                    "attribute {name}=\"{v}\" of node {} must be 0 or 1",
                    self.elem
                ),
                "write 0 or 1",
            )),
        }
    }

    fn buf(&self, name: &str) -> Result<MBuf, Problem> {
        let s = self.str(name)?;
        MBuf::parse(s).ok_or_else(|| {
            bad(
                self.at,
                format!("{name}=\"{s}\" is not a buffer"),
                "buffers are `i` (input), `o` (output) and `s` (scratch)",
            )
        })
    }
}

fn attrs<'a, 'e>(e: &'e BytesStart, elem: &'a str, at: usize) -> Result<Attrs<'a, 'e>, Problem> {
    let mut v = Vec::with_capacity(10);
    for a in e.attributes().with_checks(true) {
        let a = a.map_err(|x| {
            bad(
                at,
                format!("malformed attribute: {x}"),
                "write attributes as name=\"value\", each name once",
            )
        })?;
        v.push((a.key.into_inner(), a.value));
    }
    Ok(Attrs { v, elem, at })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Algo,
    Gpu,
    Tb,
    Skip,
}

/// Reads an XML text into an [`Algo`] (root unknown) and the spans of its elements.
pub fn read(text: &str) -> Result<(Algo, Spans), Problem> {
    let mut reader = quick_xml::Reader::from_str(text);
    let mut stack: Vec<Ctx> = Vec::new();
    let mut algo: Option<Algo> = None;
    let mut spans = Spans::default();
    let mut done = false;
    loop {
        let start = reader.buffer_position() as usize;
        let ev = reader.read_event().map_err(|e| {
            bad(
                reader.error_position() as usize,
                format!("not well-formed XML: {e}"),
                "fix the XML syntax",
            )
        })?;
        let end = reader.buffer_position() as usize;
        let (e, empty) = match ev {
            Event::Eof => break,
            Event::Comment(_) => continue,
            Event::Text(t) => {
                if let Some(k) = t.iter().position(|c| !matches!(c, b' ' | b'\n' | b'\r')) {
                    let what = if t[k] == b'\t' {
                        "a tab between elements; the executor's reader skips only spaces and line breaks"
                    } else {
                        "text between elements; the executor's reader expects only elements"
                    };
                    return Err(bad(
                        start + k,
                        what,
                        "indent with spaces and remove text outside tags",
                    ));
                }
                continue;
            }
            Event::Decl(_) | Event::PI(_) => {
                return Err(bad(
                    start,
                    "an <?xml ...?> prolog or processing instruction; the executor's reader fails with \"expected >, got '?'\"",
                    "remove the <?...?> line",
                ));
            }
            Event::DocType(_) | Event::CData(_) | Event::GeneralRef(_) => {
                return Err(bad(
                    start,
                    "DOCTYPE, CDATA or entity references are not read by the executor",
                    "remove them",
                ));
            }
            Event::End(_) => {
                stack.pop();
                if stack.is_empty() {
                    done = true;
                }
                continue;
            }
            Event::Start(e) => (e, false),
            Event::Empty(e) => (e, true),
        };
        super::lex::strict_tag(&text.as_bytes()[start..end], start)?;
        let span = (start as u32, end as u32);
        let name = e.name();
        let name = name.as_ref();
        let parent = stack.last().copied();
        let ctx = match parent {
            None => {
                if done || name != b"algo" {
                    return Err(bad(
                        start,
                        "the first and only top-level element must be <algo>",
                        "the executor reads only the first element of the file; start it with <algo ...>",
                    ));
                }
                let a = attrs(&e, "algo", start)?;
                let proto = a.str("proto")?;
                let proto = Proto::parse(proto).ok_or_else(|| {
                    bad(
                        start,
                        format!("proto=\"{proto}\" is not a protocol"),
                        "proto is `Simple`, `LL` or `LL128` (case-sensitive)",
                    )
                })?;
                algo = Some(Algo {
                    name: a.str("name").unwrap_or("").to_string(),
                    proto,
                    nchannels: a.int("nchannels")?,
                    nchunksperloop: a.int("nchunksperloop")?,
                    ngpus: a.int("ngpus")?,
                    coll: a.str("coll")?.to_string(),
                    inplace: a.flag("inplace")?,
                    outofplace: a.flag("outofplace")?,
                    min_bytes: a.int("minBytes")?,
                    max_bytes: a.int("maxBytes")?,
                    gpus: Vec::new(),
                    root: None,
                });
                spans.algo = span;
                Ctx::Algo
            }
            Some(Ctx::Algo) if name == b"gpu" => {
                let a = attrs(&e, "gpu", start)?;
                let g = Gpu {
                    id: a.int("id")?,
                    i_chunks: a.int("i_chunks")?,
                    o_chunks: a.int("o_chunks")?,
                    s_chunks: a.int("s_chunks")?,
                    tbs: Vec::new(),
                };
                let algo = algo.as_mut().expect("inside <algo>");
                algo.gpus.push(g);
                spans.gpus.push(span);
                spans.tb_first.push(spans.tbs.len() as u32);
                Ctx::Gpu
            }
            Some(Ctx::Gpu) if name == b"tb" => {
                let a = attrs(&e, "tb", start)?;
                let tb = Tb {
                    send: a.int("send")?,
                    recv: a.int("recv")?,
                    chan: a.int("chan")?,
                    steps: Vec::new(),
                };
                let id = a.int("id")?;
                let g = algo
                    .as_mut()
                    .and_then(|x| x.gpus.last_mut())
                    .expect("inside <gpu>");
                if id != g.tbs.len() as i64 {
                    return Err(Problem::new(
                        Code::MscclInvalid,
                        At::Byte(start),
                        format!(
                            "tb id=\"{id}\" where id {} comes next; the executor needs ids 0, 1, 2, ... without gaps or duplicates (\"thread block {} is missing\")",
                            g.tbs.len(),
                            g.tbs.len()
                        ),
                        "number the thread blocks of each gpu 0, 1, 2, ... in order",
                    ));
                }
                g.tbs.push(tb);
                spans.tbs.push(span);
                spans.step_first.push(spans.steps.len() as u32);
                Ctx::Tb
            }
            Some(Ctx::Tb) if name == b"step" => {
                let a = attrs(&e, "step", start)?;
                let ty = a.str("type")?;
                let ty = StepType::parse(ty).ok_or_else(|| bad(start, format!("type=\"{ty}\" is not a step type of the current executor"), "types are s, r, rcs, rrs, rrc, rrcs, cpy, re and nop (`ra` and `res` were legacy only)"))?;
                let step = Step {
                    ty,
                    src: a.buf("srcbuf")?,
                    srcoff: a.int("srcoff")?,
                    dst: a.buf("dstbuf")?,
                    dstoff: a.int("dstoff")?,
                    cnt: a.int("cnt")?,
                    depid: a.int("depid")?,
                    deps: a.int("deps")?,
                    hasdep: a.flag("hasdep")?,
                };
                let s = a.int("s")?;
                let tb = algo
                    .as_mut()
                    .and_then(|x| x.gpus.last_mut())
                    .and_then(|g| g.tbs.last_mut())
                    .expect("inside <tb>");
                if s != tb.steps.len() as i64 {
                    return Err(Problem::new(
                        Code::MscclInvalid,
                        At::Byte(start),
                        format!(
                            "step s=\"{s}\" at position {}; the kernel numbers steps by position, so dependencies on this block would point elsewhere",
                            tb.steps.len()
                        ),
                        "number the steps of each tb 0, 1, 2, ... in order, nops included",
                    ));
                }
                tb.steps.push(step);
                spans.steps.push(span);
                Ctx::Skip
            }
            Some(_) => Ctx::Skip,
        };
        if !empty {
            stack.push(ctx);
        } else if parent.is_none() {
            done = true;
        }
    }
    match algo {
        Some(a) if stack.is_empty() => Ok((a, spans)),
        Some(_) => Err(bad(
            text.len(),
            "the <algo> element is not closed",
            "close it with </algo>",
        )),
        None => Err(bad(
            0,
            "no <algo> element",
            "an MSCCL XML file is one <algo ...> element",
        )),
    }
}
