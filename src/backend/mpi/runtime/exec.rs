//! Runs this rank's steps: a dataflow executor over non-blocking point-to-point MPI.
//!
//! A step starts once the steps it depends on have finished; nothing else orders steps. A send
//! copies its data into its own staging area and posts `MPI_Isend`, and finishes at once (collc's
//! IR gives sends buffered semantics: a send captures its data when it runs). A receive posts
//! `MPI_Irecv` into its own staging area and finishes when the message is in and copied or
//! reduced into place. Ready local steps and postings run first; then the executor waits for
//! any outstanding requests (`MPI_Waitsome`). collc gives every message between two ranks its
//! own tag, so requests may be posted in whatever order the dependencies allow, and the
//! verifier's proof that no order deadlocks carries over.

use crate::elem::{Elem, Op};
use crate::plan::{Plan, Span, Step};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

/// The buffers of one rank: input, output and scratch, and the staging areas of messages.
pub struct Buffers<T> {
    pub bufs: [Vec<T>; 3],
    staged: [Vec<T>; 2],
}

impl<T: Elem> Buffers<T> {
    pub fn new(plan: &Plan) -> Buffers<T> {
        let zeros = |n: usize| vec![T::default(); n];
        Buffers {
            bufs: [
                zeros(plan.lens[0]),
                zeros(plan.lens[1]),
                zeros(plan.lens[2]),
            ],
            staged: [zeros(plan.staged[0]), zeros(plan.staged[1])],
        }
    }
}

/// Cuts `area` into one piece per step of `plan` that stages `which` (0 sends, 1 receives).
fn carve<'a, T>(plan: &Plan, mut area: &'a mut [T], which: usize) -> Vec<Option<&'a mut [T]>> {
    let mut pieces = Vec::with_capacity(plan.steps.len());
    for step in &plan.steps {
        let len = match (step, which) {
            (Step::Send { src, .. }, 0) => Some(src.len),
            (Step::Recv { dst, .. }, 1) => Some(dst.len),
            _ => None,
        };
        pieces.push(len.map(|len| {
            let (piece, rest) = std::mem::take(&mut area).split_at_mut(len);
            area = rest;
            piece
        }));
    }
    pieces
}

/// `dst` of one buffer and `src` of the same or another buffer, borrowed together.
fn pair<T>(bufs: &mut [Vec<T>; 3], dst: Span, src: Span) -> (&mut [T], &[T]) {
    if dst.buf == src.buf {
        let b = &mut bufs[dst.buf];
        if dst.start < src.start {
            let (lo, hi) = b.split_at_mut(src.start);
            (&mut lo[dst.range()], &hi[..src.len])
        } else {
            let (lo, hi) = b.split_at_mut(dst.start);
            (&mut hi[..dst.len], &lo[src.range()])
        }
    } else {
        let [a, b, c] = bufs;
        let (d, s): (&mut Vec<T>, &Vec<T>) = match (dst.buf, src.buf) {
            (0, 1) => (a, b),
            (0, _) => (a, c),
            (1, 0) => (b, a),
            (1, _) => (b, c),
            (_, 0) => (c, a),
            _ => (c, b),
        };
        (&mut d[dst.range()], &s[src.range()])
    }
}

fn reduce_into<T: Elem>(op: Op, dst: &mut [T], src: &[T]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = T::combine(op, *d, *s);
    }
}

/// Marks `step` finished and makes the steps waiting only for it ready.
fn finish(plan: &Plan, waits: &mut [u32], ready: &mut Vec<u32>, step: usize) {
    for &next in &plan.after[plan.after_at[step]..plan.after_at[step + 1]] {
        waits[next as usize] -= 1;
        if waits[next as usize] == 0 {
            ready.push(next);
        }
    }
}

/// Runs the schedule once on `b` (the input buffer must be filled).
pub fn run<T: Elem>(world: &SimpleCommunicator, plan: &Plan, b: &mut Buffers<T>) {
    let op = plan.header.op;
    let Buffers { bufs, staged } = b;
    let [send_area, recv_area] = staged;
    let mut sends = carve(plan, send_area, 0);
    let mut recvs = carve(plan, recv_area, 1);
    let mut waits = plan.waits.clone();
    let mut ready: Vec<u32> = (0..plan.steps.len() as u32)
        .rev()
        .filter(|&s| waits[s as usize] == 0)
        .collect();
    // Per request, the receive it completes (sends complete nothing).
    const SEND: u32 = u32::MAX;
    let mut owner: Vec<u32> = Vec::with_capacity(plan.requests);
    let mut finished = 0;
    mpi::request::multiple_scope(plan.requests, |scope, requests| {
        let mut done = Vec::new();
        loop {
            while let Some(s) = ready.pop() {
                let s = s as usize;
                match plan.steps[s] {
                    Step::Send { peer, tag, src } => {
                        let piece = sends[s].take().expect("each send runs once");
                        piece.copy_from_slice(&bufs[src.buf][src.range()]);
                        let piece: &[T] = piece;
                        let process = world.process_at_rank(peer);
                        requests.add(process.immediate_send_with_tag(scope, piece, tag));
                        owner.push(SEND);
                    }
                    Step::Recv { peer, tag, .. } => {
                        let piece = recvs[s].take().expect("each receive runs once");
                        let process = world.process_at_rank(peer);
                        requests.add(process.immediate_receive_into_with_tag(scope, piece, tag));
                        owner.push(s as u32);
                        continue;
                    }
                    Step::Reduce { dst, src } => {
                        let (d, s) = pair(bufs, dst, src);
                        reduce_into(op, d, s);
                    }
                    Step::Copy { dst, src } => {
                        let (d, s) = pair(bufs, dst, src);
                        d.copy_from_slice(s);
                    }
                }
                finished += 1;
                finish(plan, &mut waits, &mut ready, s);
            }
            if finished == plan.steps.len() {
                break;
            }
            assert!(
                requests.incomplete() > 0,
                "rank {}: {} steps can never start (the schedule is stuck)",
                plan.rank,
                plan.steps.len() - finished
            );
            requests.wait_some(&mut done);
            for &(i, _, data) in &done {
                let s = owner[i];
                if s == SEND {
                    continue;
                }
                let s = s as usize;
                if let Step::Recv { dst, reduce, .. } = plan.steps[s] {
                    let d = &mut bufs[dst.buf][dst.range()];
                    if reduce {
                        reduce_into(op, d, data);
                    } else {
                        d.copy_from_slice(data);
                    }
                }
                finished += 1;
                finish(plan, &mut waits, &mut ready, s);
            }
        }
        requests.wait_all(&mut done);
    });
}
