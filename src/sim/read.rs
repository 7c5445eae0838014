//! `.goal` text straight into the simulator's graph ([`Compiled`]) as it is read, for
//! `collc sim FILE.goal`. No source text, spans, labels or [`crate::backend::goal::GoalSchedule`]
//! are kept: a run holds about 40 bytes per op and one rank's labels, where the full reader
//! ([`crate::backend::goal::parse`]) holds the text, its line table, every label and span, and
//! the schedule beside the graph (1.2 GB for recursive doubling on 65,536 ranks, against
//! LogGOPSim's 180 MB).
//!
//! It is a fast path, not a second reader. It takes a strict subset of GOAL, the layout
//! writers use: one item per line (`num_ranks N`, `rank N {`, `}`, `[label:] op`,
//! `a requires b`, `a irequires b`, a `//` comment), blanks between tokens, `\n` line ends. It
//! answers None on anything else and on everything the full reader or the validator
//! ([`crate::backend::goal::validate`]) could object to (a number out of range, a peer beyond
//! `num_ranks`, ranks out of order or missing, a duplicate or undefined label, a label used
//! before its op); the caller then runs the full reader, which accepts the file or words the
//! problem. It also answers None where whether the schedule completes could depend on timing:
//! wildcard receives, or a rank whose sends (or receives) name one (peer, tag) twice. Without
//! those, every receive has one possible message, and running is monotone: an op that runs in
//! a timed run also runs in the validator's all-eager run. So a timed run that completes is
//! one the validator accepts; a run that does not complete is re-run through the full reader
//! by the caller, for its diagnostics. When this answers Some, the full reader accepts the file
//! and builds the same graph, through the same [`Builder`] (tests hold the two together).

use super::engine::{Builder, Compiled};
use rustc_hash::FxHashMap;
use std::io::Read;

/// The largest rank number or peer the full reader takes (`u32::MAX` is the wildcard).
const MAX_RANK: u64 = u32::MAX as u64 - 1;

/// Bytes of text per chunk (cut after a rank's `}` line).
const CHUNK: usize = 2 << 20;

/// The longest line the fast path reads (a longer one is the full reader's).
const LINE: usize = 1 << 20;

/// Reads GOAL text from `input` (of about `len` bytes, for capacities); None when the full
/// reader must decide (see the module doc), including on a read error.
///
/// The text comes in chunks of whole ranks ([`Chunks`]). The first is read on the calling
/// thread (it holds `num_ranks`); the others in batches, one chunk per thread (rayon), each
/// into a builder of its own, appended in file order: the graph is the same for any number of
/// threads.
pub fn compile(input: impl Read, len: u64) -> Option<Compiled> {
    compile_in_chunks(input, len, CHUNK)
}

/// [`compile`] with chunks of about `chunk` bytes (tests cut small texts into many).
pub fn compile_in_chunks(input: impl Read, len: u64, chunk: usize) -> Option<Compiled> {
    let mut chunks = Chunks {
        input,
        carry: Vec::new(),
        spare: Vec::new(),
        done: false,
        failed: false,
        aligned: true,
        chunk: chunk.max(1),
    };
    let mut main = Reader::new(
        Builder::with_capacity(estimate(len, 24), estimate(len, 16)),
        None,
        Some(0),
    );
    main.lines(&chunks.next()?.text)?;
    let n = main.ranks?;
    let threads = crate::par::threads();
    let mut readers: Vec<Reader> = Vec::with_capacity(threads);
    loop {
        // Pieces that start a rank, read in parallel; a piece that does not (the text before
        // it had no rank end within a chunk) is read after them by `main`, in order.
        let mut batch = Vec::with_capacity(threads);
        let mut inside = None;
        while batch.len() < threads
            && let Some(c) = chunks.next()
        {
            if !c.aligned {
                inside = Some(c.text);
                break;
            }
            batch.push(c.text);
        }
        if chunks.failed {
            return None;
        }
        if chunks.done && batch.is_empty() && inside.is_none() {
            break;
        }
        use rayon::prelude::*;
        // One reader per chunk of the batch, kept from batch to batch with its memory.
        while readers.len() < batch.len() {
            readers.push(Reader::new(Builder::with_capacity(0, 0), Some(n), None));
        }
        let read: Vec<Option<()>> = batch
            .par_iter()
            .zip(readers.par_iter_mut())
            .map(|(text, r)| {
                r.restart();
                r.lines(text)
            })
            .collect();
        for (ok, part) in read.into_iter().zip(&mut readers) {
            ok?;
            main.append(part)?;
        }
        chunks.spare.extend(batch);
        if let Some(text) = inside {
            main.lines(&text)?;
            chunks.spare.push(text);
        }
    }
    (!main.open && main.next_rank.map(u64::from) == Some(n)).then(|| main.b.finish())
}

/// A piece of the text: whole lines, and whether it starts where a rank may start (the text
/// before it ended with a rank's `}` line, or it is the first).
struct Piece {
    text: Vec<u8>,
    aligned: bool,
}

/// The text in pieces of about `chunk` bytes, cut after a line that is exactly `}` (a rank
/// longer than a chunk makes its chunk longer, so that the pieces can be read in parallel),
/// or, when a whole chunk holds no such line (a rank of more text than a chunk, a run of
/// blank lines), after its last line end: the memory held stays a few chunks whatever the
/// text. A single line longer than a chunk and [`LINE`] is left to the full reader (`failed`,
/// as a read error). None at the end (`done`) and on failure. Chunks handed back in `spare` are filled
/// again, so that the text's gigabytes pass through a few buffers that stay mapped rather than
/// through fresh memory the system must clear.
struct Chunks<R> {
    input: R,
    carry: Vec<u8>,
    spare: Vec<Vec<u8>>,
    done: bool,
    failed: bool,
    /// Whether the next piece starts after a rank's end.
    aligned: bool,
    chunk: usize,
}

impl<R: Read> Chunks<R> {
    fn next(&mut self) -> Option<Piece> {
        let mut buf = self.spare.pop().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(&self.carry);
        self.carry.clear();
        let aligned = self.aligned;
        loop {
            if self.done {
                return (!buf.is_empty()).then_some(Piece { text: buf, aligned });
            }
            let from = buf.len();
            let Ok(got) = (&mut self.input)
                .take(self.chunk as u64)
                .read_to_end(&mut buf)
            else {
                self.failed = true;
                return None;
            };
            if got == 0 {
                self.done = true;
                continue;
            }
            // Search only what is new (and two bytes before it, for a cut across reads).
            let start = from.saturating_sub(2);
            let (cut, whole) = match buf[start..].windows(3).rposition(|w| w == b"\n}\n") {
                Some(i) => (start + i + 3, true),
                None if buf.len() >= self.chunk => match memchr::memrchr(b'\n', &buf) {
                    Some(i) => (i + 1, false),
                    None if buf.len() >= self.chunk.max(LINE) => {
                        self.failed = true;
                        return None;
                    }
                    None => continue,
                },
                None => continue,
            };
            self.carry.extend_from_slice(&buf[cut..]);
            buf.truncate(cut);
            self.aligned = whole;
            return Some(Piece { text: buf, aligned });
        }
    }
}

/// A byte the fast path leaves to the full reader outside a leading `//` comment: `/`, a
/// carriage return or non-ASCII text.
#[inline]
fn unusual(b: u8) -> bool {
    (b == b'/') | (b == b'\r') | (b >= 0x80)
}

/// A capacity guess: `len / per` items, at most 2^28 (a reservation is not touched until used).
fn estimate(len: u64, per: u64) -> usize {
    (len / per).min(1 << 28) as usize
}

struct Reader {
    b: Builder,
    ranks: Option<u64>,
    /// The rank expected next; None in a later chunk until its first rank.
    next_rank: Option<u32>,
    /// The first rank of this reader's text.
    first_rank: Option<u32>,
    open: bool,
    labels: Labels,
    /// (peer, tag) of the open rank's sends and receives, checked for repeats when it closes
    /// (sorting a rank's few keys once costs less than a set insertion per op).
    sends: Vec<u64>,
    recvs: Vec<u64>,
}

/// One rank's labels. collc's own (`op<i>`, `op<i>_calc`, `i` without leading zeros) sit in
/// a table at `2 i + calc`, stamped with the rank they belong to, so nothing is cleared
/// between ranks; other labels go to a map from a hash of the text to the op, with the text
/// kept to tell two labels of one hash apart (then the reader gives up rather than guess).
#[derive(Default)]
struct Labels {
    /// (rank + 1, op) per IR label.
    ir: Vec<(u32, u32)>,
    stamp: u32,
    by_hash: FxHashMap<u64, (u32, u32, u32)>,
    text: Vec<u8>,
}

/// `op<i>` or `op<i>_calc` as `2 i + calc`.
fn ir_label(l: &[u8]) -> Option<usize> {
    let rest = l.strip_prefix(b"op")?;
    let (digits, calc) = match rest.strip_suffix(b"_calc") {
        Some(d) => (d, 1),
        None => (rest, 0),
    };
    if digits.len() > 1 && digits[0] == b'0' {
        return None;
    }
    let i = num(digits, u64::from(u32::MAX) / 2)?;
    Some(2 * i as usize + calc)
}

impl Labels {
    fn clear(&mut self) {
        self.stamp += 1;
        if !self.by_hash.is_empty() {
            self.by_hash.clear();
            self.text.clear();
        }
    }
    fn hash(l: &[u8]) -> u64 {
        use std::hash::{BuildHasher, Hasher};
        let mut h = rustc_hash::FxBuildHasher.build_hasher();
        h.write(l);
        h.finish()
    }
    /// Defines label `l` as op `op`; false when `l` is not a label (as [`label`] says), is
    /// defined already or shares a hash. IR labels go to the table while it stays within a
    /// few entries per op of the rank.
    fn define(&mut self, l: &[u8], op: u32) -> bool {
        let ir = ir_label(l);
        if let Some(k) = ir.filter(|k| *k < 4 * (op as usize + 64)) {
            // An IR label is a label; it may sit in the map if it was defined when the table
            // could not hold it yet.
            if self.mapped(l).is_some() {
                return false;
            }
            if k >= self.ir.len() {
                self.ir.resize(k + 1, (0, 0));
            }
            let e = &mut self.ir[k];
            if e.0 == self.stamp {
                return false;
            }
            *e = (self.stamp, op);
            return true;
        }
        if (ir.is_none() && !label(l)) || self.get(l).is_some() {
            return false;
        }
        let at = self.text.len() as u32;
        match self.by_hash.entry(Self::hash(l)) {
            std::collections::hash_map::Entry::Occupied(_) => false,
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert((op, at, l.len() as u32));
                self.text.extend_from_slice(l);
                true
            }
        }
    }
    /// The op label `l` names; None when it names none, or is not a label.
    fn get(&self, l: &[u8]) -> Option<u32> {
        match ir_label(l) {
            Some(k) => match self.ir.get(k) {
                Some(e) if e.0 == self.stamp => Some(e.1),
                _ => self.mapped(l),
            },
            None if label(l) => self.mapped(l),
            None => None,
        }
    }
    /// The op of label `l` in the map of labels outside the table.
    fn mapped(&self, l: &[u8]) -> Option<u32> {
        if self.by_hash.is_empty() {
            return None;
        }
        let &(op, at, len) = self.by_hash.get(&Self::hash(l))?;
        (&self.text[at as usize..(at + len) as usize] == l).then_some(op)
    }
}

/// Blank-separated tokens of one line.
struct Tokens<'a>(std::slice::Split<'a, u8, fn(&u8) -> bool>);

impl<'a> Tokens<'a> {
    fn new(line: &'a [u8]) -> Self {
        let blank: fn(&u8) -> bool = |b| *b == b' ' || *b == b'\t';
        Tokens(line.split(blank))
    }
}

impl<'a> Iterator for Tokens<'a> {
    type Item = &'a [u8];
    fn next(&mut self) -> Option<&'a [u8]> {
        self.0.by_ref().find(|t| !t.is_empty())
    }
}

/// A decimal number of at most `max`.
fn num(t: &[u8], max: u64) -> Option<u64> {
    if t.is_empty() || t.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &c in t {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    (v <= max).then_some(v)
}

/// A label as the full reader takes it: a letter, then letters, digits or `_`, not a keyword.
fn label(t: &[u8]) -> bool {
    t.first().is_some_and(u8::is_ascii_alphabetic)
        && t.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_')
        && !crate::backend::goal::KEYWORDS
            .iter()
            .any(|k| k.as_bytes() == t)
}

impl Reader {
    fn new(b: Builder, ranks: Option<u64>, next_rank: Option<u32>) -> Self {
        Reader {
            b,
            ranks,
            next_rank,
            first_rank: None,
            open: false,
            labels: Labels::default(),
            sends: Vec::new(),
            recvs: Vec::new(),
        }
    }

    /// Every line of `text` (the last may lack its newline).
    fn lines(&mut self, text: &[u8]) -> Option<()> {
        let text = text.strip_suffix(b"\n").unwrap_or(text);
        // One pass over the whole text (vectorized) instead of one per line: text without any
        // `/`, carriage return or non-ASCII byte needs no per-line check for them.
        let plain = !text.iter().fold(false, |any, &b| any | unusual(b));
        let mut from = 0;
        loop {
            // Empty lines are skipped as a run (a file of blank lines streams at the speed
            // of this scan, not of one line's handling per byte).
            from += text[from..].iter().take_while(|&&b| b == b'\n').count();
            let Some(i) = memchr::memchr(b'\n', &text[from..]) else {
                return self.line(&text[from..], plain);
            };
            self.line(&text[from..from + i], plain)?;
            from += i + 1;
        }
    }

    /// Makes a reader of a later chunk, appended and so with no rank open, ready to read the
    /// next one (its memory kept; each `rank` line clears the labels and channel keys).
    fn restart(&mut self) {
        self.next_rank = None;
        self.first_rank = None;
    }

    /// Appends the ranks `part` read (from the chunk after this reader's text), leaving it
    /// empty.
    fn append(&mut self, part: &mut Reader) -> Option<()> {
        if self.open || part.open {
            return None;
        }
        if let (Some(first), Some(next)) = (part.first_rank, part.next_rank) {
            if self.next_rank != Some(first) {
                return None;
            }
            self.next_rank = Some(next);
            self.b.append(&mut part.b);
        }
        Some(())
    }

    /// One line; `plain` when the text it comes from has no `/`, carriage return or
    /// non-ASCII byte.
    fn line(&mut self, line: &[u8], plain: bool) -> Option<()> {
        let mut t = Tokens::new(line);
        let Some(first) = t.next() else {
            return Some(());
        };
        if first.starts_with(b"//") {
            return Some(());
        }
        // Comments elsewhere, carriage returns and non-ASCII text are the full reader's.
        if !plain && line.iter().any(|&b| unusual(b)) {
            return None;
        }
        match first {
            b"num_ranks" => {
                let n = num(t.next()?, MAX_RANK)?;
                if self.ranks.is_some() || self.open || self.next_rank != Some(0) || n == 0 {
                    return None;
                }
                self.ranks = Some(n);
            }
            b"rank" => {
                let n = num(t.next()?, MAX_RANK)?;
                let expected = self.next_rank.map_or(n, u64::from);
                if t.next()? != b"{" || self.open || n != expected || n >= self.ranks? {
                    return None;
                }
                self.first_rank.get_or_insert(n as u32);
                self.next_rank = Some(n as u32);
                self.open = true;
                self.b.rank();
                self.labels.clear();
                self.sends.clear();
                self.recvs.clear();
            }
            b"}" => {
                if !self.open {
                    return None;
                }
                self.open = false;
                self.next_rank = Some(self.next_rank? + 1);
                for keys in [&mut self.sends, &mut self.recvs] {
                    keys.sort_unstable();
                    if keys.windows(2).any(|w| w[0] == w[1]) {
                        return None;
                    }
                }
            }
            _ if !self.open => return None,
            b"send" | b"recv" | b"calc" => return self.op(first, None, t),
            _ => {
                let second = t.next()?;
                if let Some(l) = first.strip_suffix(b":") {
                    return self.op(second, Some(l), t);
                }
                if second == b":" {
                    let kw = t.next()?;
                    return self.op(kw, Some(first), t);
                }
                let ir = match second {
                    b"requires" => false,
                    b"irequires" => true,
                    _ => return None,
                };
                let on = t.next()?;
                if t.next().is_some() {
                    return None;
                }
                let (op, on) = (self.labels.get(first)?, self.labels.get(on)?);
                self.b.dep(op, on, ir);
            }
        }
        t.next().is_none().then_some(())
    }

    /// `kw ...` (the rest of the line in `t`), labelled `l`.
    fn op<'a>(&mut self, kw: &[u8], l: Option<&[u8]>, mut t: Tokens<'a>) -> Option<()> {
        let n = self.ranks?;
        if let Some(l) = l
            && !self.labels.define(l, self.b.rank_ops())
        {
            return None;
        }
        let byte = |x: Option<u64>| u8::try_from(x.unwrap_or(0)).ok();
        match kw {
            b"calc" => {
                let time = num(t.next()?, u64::MAX)?;
                let cpu = match t.next() {
                    None => None,
                    Some(b"cpu") => Some(num(t.next()?, 255)?),
                    Some(_) => return None,
                };
                self.b.calc(time, byte(cpu)?, 0);
            }
            b"send" | b"recv" => {
                let size = num(t.next()?.strip_suffix(b"b")?, u64::MAX)?;
                let send = kw == b"send";
                if t.next()? != if send { &b"to"[..] } else { b"from" } {
                    return None;
                }
                let peer = num(t.next()?, MAX_RANK)?;
                if peer >= n {
                    return None;
                }
                let (mut tag, mut cpu, mut nic) = (None, None, None);
                let mut next = t.next();
                for (word, slot, max) in [
                    (&b"tag"[..], &mut tag, u64::from(u32::MAX) - 1),
                    (b"cpu", &mut cpu, 255),
                    (b"nic", &mut nic, 255),
                ] {
                    if next == Some(word) {
                        *slot = Some(num(t.next()?, max)?);
                        next = t.next();
                    }
                }
                if next.is_some() {
                    return None;
                }
                let tag = tag.unwrap_or(0) as u32;
                let key = (peer << 32) | u64::from(tag);
                if send {
                    self.sends.push(key);
                } else {
                    self.recvs.push(key);
                }
                let (cpu, nic) = (byte(cpu)?, byte(nic)?);
                if send {
                    self.b.send(size, peer as u32, tag, cpu, nic);
                } else {
                    self.b.recv(size, peer as u32, tag, cpu, nic);
                }
            }
            _ => return None,
        }
        Some(())
    }
}
