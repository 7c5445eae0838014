//! `schedule.bin`: the compact binary form of a verified program that the generated MPI program
//! embeds and runs, and its decoder (the generated program has its own, in `runtime/plan.rs`,
//! whose module doc states the format).
//!
//! MPI tags: the IR matches the k-th send from p to q with tag t to the k-th receive on q from p
//! with tag t. The encoder gives that message the MPI tag `d(t) * K + k`, where `d` numbers the
//! IR's distinct tags densely and `K` is the longest such channel of the program. Every message
//! between two ranks thus has its own MPI tag, so the runtime may post sends and receives in any
//! order its dependencies allow and MPI still pairs them as the IR does. MPI promises tags up to
//! 32,767 only ([`MAX_TAG`]); a program that needs more is an error.

use super::MpiError;
use crate::ir::{Buf, Op, OpKind, Proc, ProcKind, Program, Slice, Spec};
use crate::sema::model::{CollectiveKind, Dtype, ReduceOp};
use rustc_hash::{FxHashMap, FxHashSet};

/// The largest tag every MPI library accepts (the standard's lower bound for `MPI_TAG_UB`).
pub const MAX_TAG: u32 = 32_767;

const MAGIC: &[u8; 9] = b"COLLCMPI\x01";

const KINDS: [CollectiveKind; 7] = [
    CollectiveKind::Allreduce,
    CollectiveKind::Allgather,
    CollectiveKind::ReduceScatter,
    CollectiveKind::Broadcast,
    CollectiveKind::Reduce,
    CollectiveKind::Barrier,
    CollectiveKind::Alltoall,
];
const DTYPES: [Dtype; 4] = [Dtype::I32, Dtype::I64, Dtype::F32, Dtype::F64];
const OPS: [ReduceOp; 4] = [ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Min, ReduceOp::Max];

fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_slice(out: &mut Vec<u8>, s: Slice) {
    let buf = match s.buf {
        Buf::Input => 0,
        Buf::Output => 1,
        Buf::Scratch => 2,
    };
    put(out, (u64::from(s.start) << 2) | buf);
    put(out, u64::from(s.count));
}

fn index_of<T: PartialEq>(all: &[T], x: &T) -> u64 {
    all.iter().position(|y| y == x).unwrap_or(0) as u64
}

/// The MPI tag of every message op: per process, per op (0 for local ops).
struct Tags {
    of: Vec<Vec<u32>>,
    /// Tags used: the IR's distinct tags times the longest channel.
    count: u64,
}

/// The ordinal k of every message op of `proc` on its channel (peer, IR tag, direction), using
/// `seen` (cleared first) as scratch; also the longest channel.
fn channel_ordinals(proc: &Proc, seen: &mut FxHashMap<u64, u32>, ks: &mut Vec<u32>) -> u32 {
    seen.clear();
    ks.clear();
    let mut longest = 0;
    for op in &proc.ops {
        let (Some(peer), Some(tag)) = (op.kind.peer(), op.kind.tag()) else {
            ks.push(0);
            continue;
        };
        let send = u64::from(matches!(op.kind, OpKind::Send { .. }));
        let key = (u64::from(peer) << 33) | (u64::from(tag) << 1) | send;
        let k = seen.entry(key).or_insert(0);
        ks.push(*k);
        *k += 1;
        longest = longest.max(*k);
    }
    longest
}

/// Assigns the MPI tags of the module doc: `d(t) * K + k`.
fn tags(p: &Program) -> Tags {
    let mut seen = FxHashMap::default();
    let mut longest = 0;
    let mut of: Vec<Vec<u32>> = Vec::with_capacity(p.procs.len());
    let mut used: FxHashSet<u32> = FxHashSet::default();
    for proc in &p.procs {
        let mut ks = Vec::with_capacity(proc.ops.len());
        longest = longest.max(channel_ordinals(proc, &mut seen, &mut ks));
        of.push(ks);
        used.extend(proc.ops.iter().filter_map(|o| o.kind.tag()));
    }
    let mut all: Vec<u32> = used.into_iter().collect();
    all.sort_unstable();
    let dense = |t: u32| all.binary_search(&t).unwrap_or(0) as u32;
    for (proc, ks) in p.procs.iter().zip(&mut of) {
        for (op, k) in proc.ops.iter().zip(ks.iter_mut()) {
            if let Some(t) = op.kind.tag() {
                // Saturates when there are too many tags, which `encode` then reports.
                *k = dense(t).saturating_mul(longest).saturating_add(*k);
            }
        }
    }
    Tags {
        of,
        count: all.len() as u64 * u64::from(longest),
    }
}

/// Encodes a verified program of ranks only (see the module doc).
pub fn encode(p: &Program) -> Result<Vec<u8>, MpiError> {
    if let Some(pi) = p.procs.iter().position(|x| x.kind != ProcKind::Rank) {
        return Err(MpiError::switch(pi));
    }
    let sp = &p.spec;
    let t = tags(p);
    let tag_count = t.count;
    if tag_count > u64::from(MAX_TAG) + 1 {
        return Err(MpiError::tags(tag_count - 1));
    }
    let mut out = MAGIC.to_vec();
    put(&mut out, index_of(&KINDS, &sp.kind));
    put(&mut out, index_of(&DTYPES, &sp.dtype));
    put(&mut out, index_of(&OPS, &sp.op));
    put(&mut out, sp.root.map_or(0, |r| u64::from(r) + 1));
    put(&mut out, u64::from(sp.ranks));
    put(&mut out, sp.part_elements);
    put(&mut out, u64::from(sp.chunks_per_part));
    put(&mut out, tag_count.saturating_sub(1));
    put(&mut out, p.name.len() as u64);
    out.extend_from_slice(p.name.as_bytes());
    let index = out.len();
    out.resize(index + 4 * p.procs.len(), 0);
    let records = out.len();
    for (pi, proc) in p.procs.iter().enumerate() {
        let at = u32::try_from(out.len() - records).map_err(|_| MpiError::too_large())?;
        out[index + 4 * pi..index + 4 * pi + 4].copy_from_slice(&at.to_le_bytes());
        put(&mut out, u64::from(proc.scratch));
        put(&mut out, proc.ops.len() as u64);
        for (i, op) in proc.ops.iter().enumerate() {
            encode_op(&mut out, i, op, t.of[pi][i]);
        }
    }
    Ok(out)
}

fn encode_op(out: &mut Vec<u8>, i: usize, op: &Op, tag: u32) {
    match op.kind {
        OpKind::Send { peer, src, .. } => {
            out.push(0);
            put(out, u64::from(peer));
            put(out, u64::from(tag));
            put_slice(out, src);
        }
        OpKind::Recv { peer, dst, .. } | OpKind::RecvReduce { peer, dst, .. } => {
            out.push(if matches!(op.kind, OpKind::Recv { .. }) {
                1
            } else {
                2
            });
            put(out, u64::from(peer));
            put(out, u64::from(tag));
            put_slice(out, dst);
        }
        OpKind::Reduce { dst, src } | OpKind::Copy { dst, src } => {
            out.push(if matches!(op.kind, OpKind::Reduce { .. }) {
                3
            } else {
                4
            });
            put_slice(out, dst);
            put_slice(out, src);
        }
    }
    put(out, op.deps.len() as u64);
    for &d in &op.deps {
        let delta = i as i64 - i64::from(d);
        put(out, ((delta << 1) ^ (delta >> 63)) as u64);
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Result<u8, String> {
        let b = *self.bytes.get(self.at).ok_or("ends early")?;
        self.at += 1;
        Ok(b)
    }

    fn uint(&mut self) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("an integer is too long".into())
    }

    fn u32(&mut self) -> Result<u32, String> {
        u32::try_from(self.uint()?).map_err(|_| "a number is out of range".to_string())
    }

    fn slice(&mut self) -> Result<Slice, String> {
        let head = self.uint()?;
        let buf = [Buf::Input, Buf::Output, Buf::Scratch]
            .get((head & 3) as usize)
            .copied()
            .ok_or("bad buffer")?;
        let start = u32::try_from(head >> 2).map_err(|_| "slot out of range")?;
        Ok(Slice::new(buf, start, self.u32()?))
    }

    fn pick<T: Copy>(&mut self, all: &[T]) -> Result<T, String> {
        let i = self.uint()? as usize;
        all.get(i).copied().ok_or_else(|| format!("bad code {i}"))
    }
}

/// Decodes `schedule.bin` back into a program whose tags are the MPI tags (so matching by
/// (sender, receiver, tag) in program order pairs the same messages, and `ir::verify` applies).
pub fn decode(bytes: &[u8]) -> Result<Program, String> {
    if bytes.get(..MAGIC.len()) != Some(MAGIC.as_slice()) {
        return Err("not a collc MPI schedule of version 1".into());
    }
    let mut r = Reader {
        bytes,
        at: MAGIC.len(),
    };
    let kind = r.pick(&KINDS)?;
    let dtype = r.pick(&DTYPES)?;
    let op = r.pick(&OPS)?;
    let root = r.u32()?.checked_sub(1);
    let ranks = r.u32()?;
    let part_elements = r.uint()?;
    let chunks_per_part = r.u32()?;
    let _max_tag = r.uint()?;
    let n = r.uint()? as usize;
    let name = bytes.get(r.at..r.at + n).ok_or("ends early")?;
    r.at += n;
    let spec = Spec {
        kind,
        ranks,
        part_elements,
        chunks_per_part,
        dtype,
        op,
        root,
    };
    let mut p = Program::new(String::from_utf8_lossy(name), spec);
    let records = r.at + 4 * ranks as usize;
    for pi in 0..ranks as usize {
        let e = bytes
            .get(r.at + 4 * pi..r.at + 4 * pi + 4)
            .ok_or("ends early")?;
        let at = u32::from_le_bytes([e[0], e[1], e[2], e[3]]) as usize;
        let mut rr = Reader {
            bytes,
            at: records + at,
        };
        p.procs[pi].scratch = rr.u32()?;
        let count = rr.uint()? as usize;
        for i in 0..count {
            let kind = match rr.byte()? {
                c @ 0..=2 => {
                    let (peer, tag, s) = (rr.u32()?, rr.u32()?, rr.slice()?);
                    match c {
                        0 => OpKind::Send { peer, src: s, tag },
                        1 => OpKind::Recv { peer, dst: s, tag },
                        _ => OpKind::RecvReduce { peer, dst: s, tag },
                    }
                }
                c @ (3 | 4) => {
                    let (dst, src) = (rr.slice()?, rr.slice()?);
                    if c == 3 {
                        OpKind::Reduce { dst, src }
                    } else {
                        OpKind::Copy { dst, src }
                    }
                }
                c => return Err(format!("unknown op code {c}")),
            };
            let k = rr.uint()?;
            let mut deps = Vec::with_capacity(k as usize);
            for _ in 0..k {
                let z = rr.uint()?;
                let delta = (z >> 1) as i64 ^ -((z & 1) as i64);
                let d = u32::try_from(i as i64 - delta).map_err(|_| "bad dependency")?;
                deps.push(d);
            }
            p.push(pi as u32, kind, deps);
        }
    }
    Ok(p)
}
