//! The schedule: decodes `schedule.bin`, which collc wrote, into this rank's plan.
//!
//! Format (version 1; integers are unsigned LEB128 unless noted):
//! `COLLCMPI`, version byte 1; kind, dtype, op, root + 1 (0: none), ranks, part elements,
//! chunks per part, highest tag, name length and UTF-8 name; then one little-endian u32 per
//! rank, the offset of its record after this index. A record: scratch slots, step count, steps.
//! A step: a code byte (0 send, 1 receive, 2 receive-and-reduce, 3 reduce, 4 copy); for the
//! first three the peer, the tag and a slice, for the others the destination and source slices;
//! then its dependencies, a count and each as zigzag(step - dependency). A slice: start slot
//! shifted left by two with the buffer (0 input, 1 output, 2 scratch) in the low bits, then the
//! slot count. Slot `k` holds chunk `k % chunks` of part `k / chunks`; chunk `j` of a part is
//! elements `part * j / chunks .. part * (j + 1) / chunks`.

use crate::elem::Op;

/// The collective the schedule implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Allreduce,
    Allgather,
    ReduceScatter,
    Broadcast,
    Reduce,
    Barrier,
    Alltoall,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Allreduce => "allreduce",
            Kind::Allgather => "allgather",
            Kind::ReduceScatter => "reduce_scatter",
            Kind::Broadcast => "broadcast",
            Kind::Reduce => "reduce",
            Kind::Barrier => "barrier",
            Kind::Alltoall => "alltoall",
        }
    }

    /// The MPI library's collective that `--check` and `--bench` compare with.
    pub fn library(self) -> &'static str {
        match self {
            Kind::Allreduce => "MPI_Allreduce",
            Kind::Allgather => "MPI_Allgather",
            Kind::ReduceScatter => "MPI_Reduce_scatter_block",
            Kind::Broadcast => "MPI_Bcast",
            Kind::Reduce => "MPI_Reduce",
            Kind::Barrier => "MPI_Barrier",
            Kind::Alltoall => "MPI_Alltoall",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    I32,
    I64,
    F32,
    F64,
}

impl Dtype {
    pub fn name(self) -> &'static str {
        match self {
            Dtype::I32 => "i32",
            Dtype::I64 => "i64",
            Dtype::F32 => "f32",
            Dtype::F64 => "f64",
        }
    }
}

/// What every rank reads first: the collective and its shape.
#[derive(Clone, Debug)]
pub struct Header {
    pub kind: Kind,
    pub dtype: Dtype,
    pub op: Op,
    pub root: Option<usize>,
    pub ranks: usize,
    /// Elements of one part (the whole vector, or one rank's share for allgather and
    /// reduce-scatter).
    pub part: usize,
    pub chunks: usize,
    pub name: String,
}

impl Header {
    /// Elements of the input and output buffers.
    pub fn lens(&self) -> (usize, usize) {
        let parts_in = if matches!(self.kind, Kind::ReduceScatter | Kind::Alltoall) {
            self.ranks
        } else {
            1
        };
        let parts_out = if matches!(self.kind, Kind::Allgather | Kind::Alltoall) {
            self.ranks
        } else {
            1
        };
        (parts_in * self.part, parts_out * self.part)
    }

    /// Element offset of slot `k` in any buffer.
    pub fn offset(&self, k: usize) -> usize {
        let c = self.chunks.max(1);
        let within = (self.part as u128 * (k % c) as u128 / c as u128) as usize;
        (k / c) * self.part + within
    }
}

/// Elements `start .. start + len` of buffer `buf` (0 input, 1 output, 2 scratch).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub buf: usize,
    pub start: usize,
    pub len: usize,
}

impl Span {
    pub fn range(self) -> std::ops::Range<usize> {
        self.start..self.start + self.len
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Send {
        peer: i32,
        tag: i32,
        src: Span,
    },
    Recv {
        peer: i32,
        tag: i32,
        dst: Span,
        reduce: bool,
    },
    Reduce {
        dst: Span,
        src: Span,
    },
    Copy {
        dst: Span,
        src: Span,
    },
}

/// This rank's steps with their dependencies resolved for the executor.
pub struct Plan {
    pub header: Header,
    pub rank: usize,
    pub steps: Vec<Step>,
    /// Per step, how many steps must finish before it starts.
    pub waits: Vec<u32>,
    /// Per step, the steps that wait for it: `after[after_at[s]..after_at[s + 1]]`.
    pub after_at: Vec<usize>,
    pub after: Vec<u32>,
    /// Elements of the input, output and scratch buffers.
    pub lens: [usize; 3],
    /// Elements staged for sends and for receives in all.
    pub staged: [usize; 2],
    /// Sends and receives (one MPI request each).
    pub requests: usize,
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Result<u8, String> {
        let b = *self.bytes.get(self.at).ok_or("the schedule ends early")?;
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
        Err("an integer of the schedule is too long".into())
    }

    fn size(&mut self) -> Result<usize, String> {
        usize::try_from(self.uint()?).map_err(|_| "a size of the schedule is too large".into())
    }

    fn slice(&mut self, h: &Header, lens: &[usize; 3]) -> Result<Span, String> {
        let head = self.size()?;
        let count = self.size()?;
        let buf = head & 3;
        let start = head >> 2;
        let span = Span {
            buf,
            start: h.offset(start),
            len: h.offset(start + count) - h.offset(start),
        };
        if buf > 2 || span.start + span.len > lens[buf] {
            return Err(format!("a slice of the schedule is outside buffer {buf}"));
        }
        Ok(span)
    }
}

/// Reads the header: enough to check the world size before reading a rank's steps.
pub fn header(bytes: &[u8]) -> Result<Header, String> {
    if bytes.get(..9) != Some(b"COLLCMPI\x01".as_slice()) {
        return Err("the embedded schedule is not a collc MPI schedule of version 1".into());
    }
    read_header(&mut Reader { bytes, at: 9 })
}

fn read_header(r: &mut Reader) -> Result<Header, String> {
    let kinds = [
        Kind::Allreduce,
        Kind::Allgather,
        Kind::ReduceScatter,
        Kind::Broadcast,
        Kind::Reduce,
        Kind::Barrier,
        Kind::Alltoall,
    ];
    let kind = *kinds.get(r.size()?).ok_or("unknown collective")?;
    let dtypes = [Dtype::I32, Dtype::I64, Dtype::F32, Dtype::F64];
    let dtype = *dtypes.get(r.size()?).ok_or("unknown dtype")?;
    let ops = [Op::Sum, Op::Prod, Op::Min, Op::Max];
    let op = *ops.get(r.size()?).ok_or("unknown operator")?;
    let root = r.size()?.checked_sub(1);
    let ranks = r.size()?;
    let part = r.size()?;
    let chunks = r.size()?;
    let _max_tag = r.uint()?;
    let n = r.size()?;
    let name = r
        .bytes
        .get(r.at..r.at + n)
        .ok_or("the schedule ends early")?;
    r.at += n;
    Ok(Header {
        kind,
        dtype,
        op,
        root,
        ranks,
        part,
        chunks,
        name: String::from_utf8_lossy(name).into_owned(),
    })
}

impl Plan {
    /// The plan of `rank` (which must be below the header's rank count).
    pub fn load(bytes: &[u8], rank: usize) -> Result<Plan, String> {
        let header = header(bytes)?;
        let mut r = Reader { bytes, at: 9 };
        read_header(&mut r)?;
        let index = r.at;
        let records = index + 4 * header.ranks;
        let entry = bytes
            .get(index + 4 * rank..index + 4 * rank + 4)
            .ok_or("the schedule's index is cut short")?;
        let at = u32::from_le_bytes([entry[0], entry[1], entry[2], entry[3]]) as usize;
        let mut r = Reader {
            bytes,
            at: records + at,
        };
        let (input, output) = header.lens();
        let scratch = r.size()?;
        let lens = [input, output, header.offset(scratch)];
        let n = r.size()?;
        let mut steps = Vec::with_capacity(n);
        let mut deps = Vec::with_capacity(n);
        for s in 0..n {
            let code = r.byte()?;
            steps.push(match code {
                0..=2 => {
                    let peer = r.size()?;
                    let tag = r.size()?;
                    let span = r.slice(&header, &lens)?;
                    if peer >= header.ranks || tag > i32::MAX as usize {
                        return Err(format!("step {s} names rank {peer} or tag {tag}"));
                    }
                    let (peer, tag) = (peer as i32, tag as i32);
                    match code {
                        0 => Step::Send {
                            peer,
                            tag,
                            src: span,
                        },
                        _ => Step::Recv {
                            peer,
                            tag,
                            dst: span,
                            reduce: code == 2,
                        },
                    }
                }
                3 | 4 => {
                    let dst = r.slice(&header, &lens)?;
                    let src = r.slice(&header, &lens)?;
                    match code {
                        3 => Step::Reduce { dst, src },
                        _ => Step::Copy { dst, src },
                    }
                }
                _ => return Err(format!("step {s} has the unknown code {code}")),
            });
            let k = r.size()?;
            for _ in 0..k {
                let z = r.uint()?;
                let delta = (z >> 1) as i64 ^ -((z & 1) as i64);
                let d = s as i64 - delta;
                if d < 0 || d as usize >= n {
                    return Err(format!("step {s} depends on a step that does not exist"));
                }
                deps.push((d as u32, s as u32));
            }
        }
        Ok(Plan::new(header, rank, steps, deps, lens))
    }

    fn new(
        header: Header,
        rank: usize,
        steps: Vec<Step>,
        deps: Vec<(u32, u32)>,
        lens: [usize; 3],
    ) -> Plan {
        let n = steps.len();
        let mut waits = vec![0u32; n];
        let mut after_at = vec![0usize; n + 1];
        for &(d, s) in &deps {
            waits[s as usize] += 1;
            after_at[d as usize + 1] += 1;
        }
        for i in 0..n {
            after_at[i + 1] += after_at[i];
        }
        let mut fill = after_at.clone();
        let mut after = vec![0u32; deps.len()];
        for &(d, s) in &deps {
            after[fill[d as usize]] = s;
            fill[d as usize] += 1;
        }
        let mut staged = [0usize; 2];
        let mut requests = 0;
        for step in &steps {
            match step {
                Step::Send { src, .. } => {
                    staged[0] += src.len;
                    requests += 1;
                }
                Step::Recv { dst, .. } => {
                    staged[1] += dst.len;
                    requests += 1;
                }
                _ => {}
            }
        }
        Plan {
            header,
            rank,
            steps,
            waits,
            after_at,
            after,
            lens,
            staged,
            requests,
        }
    }
}
