//! The three modes of the program: run the schedule once, `--check` it against the MPI
//! library's own collective, and `--bench` both.
//!
//! `--check` fills every rank's input deterministically (from the rank and the element index),
//! runs the schedule and the library's collective on the same input and compares each rank's
//! output: integers, copies (allgather, broadcast) and min/max exactly; floating-point sums and
//! products within the rounding bound of any summation order (n·ε·Σ|x| for sums, 2n·ε·|x| for
//! products, n ranks), since the library may combine in another order. Outputs every rank holds
//! in full (allreduce, allgather, broadcast) must also be bitwise identical on every rank.
//! A barrier moves no data: there the check holds rank 0 back and asks that no rank leaves the
//! schedule before rank 0 entered it.

use crate::elem::{mix, Elem, Op};
use crate::exec::{self, Buffers};
use crate::plan::{Kind, Plan};
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Run,
    Check,
    Bench(u64),
}

/// Runs `mode`; returns the exit code (the same on every rank).
pub fn main<T: Elem>(world: &SimpleCommunicator, plan: &Plan, mode: Mode) -> i32 {
    let mut b = Buffers::<T>::new(plan);
    for (i, x) in b.bufs[0].iter_mut().enumerate() {
        *x = T::input(plan.header.op, mix(plan.rank, i));
    }
    match mode {
        Mode::Run => {
            world.barrier();
            let t = Instant::now();
            exec::run(world, plan, &mut b);
            let us = slowest(world, t.elapsed().as_secs_f64()) * 1e6;
            if plan.rank == 0 {
                println!("{}: done in {us:.1} us", describe(plan));
            }
            0
        }
        Mode::Check => check(world, plan, &mut b),
        Mode::Bench(iters) => bench(world, plan, &mut b, iters),
    }
}

/// E.g. `recursive_doubling: allreduce of 1024 x f64 (sum) on 8 ranks`.
fn describe(plan: &Plan) -> String {
    let h = &plan.header;
    let (input, output) = h.lens();
    let count = input.max(output);
    let what = match h.kind {
        Kind::Barrier => String::new(),
        Kind::Allgather | Kind::Broadcast | Kind::Alltoall => {
            format!(" of {count} x {}", h.dtype.name())
        }
        _ => format!(" of {count} x {} ({})", h.dtype.name(), h.op.name()),
    };
    format!("{}: {}{what} on {} ranks", h.name, h.kind.name(), h.ranks)
}

/// The largest `v` over all ranks.
fn slowest(world: &SimpleCommunicator, v: f64) -> f64 {
    let mut max = 0.0f64;
    world.all_reduce_into(&v, &mut max, SystemOperation::max());
    max
}

/// The library's collective of `input` into `out`, reducing with `op`.
fn library<T: Elem>(world: &SimpleCommunicator, plan: &Plan, op: Op, input: &[T], out: &mut [T]) {
    let root = world.process_at_rank(plan.header.root.unwrap_or(0) as i32);
    match plan.header.kind {
        Kind::Allreduce => world.all_reduce_into(input, out, op.system()),
        Kind::Allgather => world.all_gather_into(input, out),
        Kind::ReduceScatter => world.reduce_scatter_block_into(input, out, op.system()),
        Kind::Broadcast => {
            if plan.header.root == Some(plan.rank) {
                out.copy_from_slice(input);
            }
            root.broadcast_into(out);
        }
        Kind::Reduce if plan.header.root == Some(plan.rank) => {
            root.reduce_into_root(input, out, op.system())
        }
        Kind::Reduce => root.reduce_into(input, op.system()),
        Kind::Barrier => world.barrier(),
        Kind::Alltoall => world.all_to_all_into(input, out),
    }
}

fn check<T: Elem>(world: &SimpleCommunicator, plan: &Plan, b: &mut Buffers<T>) -> i32 {
    let h = &plan.header;
    if h.kind == Kind::Barrier {
        return check_barrier(world, plan, b);
    }
    exec::run(world, plan, b);
    let (input, ours) = (&b.bufs[0], &b.bufs[1]);
    let mut lib = vec![T::default(); ours.len()];
    library(world, plan, h.op, input, &mut lib);
    // Only what combines values can round differently; moved values must match bit for bit.
    let combines = matches!(h.kind, Kind::Allreduce | Kind::ReduceScatter | Kind::Reduce);
    let arithmetic = combines && T::FLOAT && matches!(h.op, Op::Sum | Op::Prod);
    let mut bound = vec![T::default(); ours.len()];
    if arithmetic && h.op == Op::Sum {
        let abs: Vec<T> = input.iter().map(|x| x.abs()).collect();
        library(world, plan, Op::Sum, &abs, &mut bound);
    }
    let defined = h.kind != Kind::Reduce || h.root == Some(plan.rank);
    let n = h.ranks as f64;
    let mut bad = 0u64;
    let mut worst = 0.0f64;
    for (i, (&x, &y)) in ours.iter().zip(&lib).enumerate().filter(|_| defined) {
        let ok = if arithmetic {
            let diff = (x.to_f64() - y.to_f64()).abs();
            let tol = match h.op {
                Op::Sum => n * T::EPSILON * bound[i].to_f64(),
                _ => 2.0 * n * T::EPSILON * y.to_f64().abs(),
            };
            worst = worst.max(diff);
            diff <= tol
        } else {
            x.bits() == y.bits()
        };
        if !ok {
            if bad == 0 {
                eprintln!(
                    "rank {}: out[{i}] = {x}, but {} gives {y}",
                    plan.rank,
                    h.kind.library()
                );
            }
            bad += 1;
        }
    }
    // Outputs every rank holds in full must match rank 0's bit for bit.
    if matches!(h.kind, Kind::Allreduce | Kind::Allgather | Kind::Broadcast) {
        let mut first = ours.clone();
        world.process_at_rank(0).broadcast_into(&mut first[..]);
        if let Some(i) = (0..ours.len()).find(|&i| ours[i].bits() != first[i].bits()) {
            eprintln!(
                "rank {}: out[{i}] = {}, but rank 0 has {}: the ranks disagree",
                plan.rank, ours[i], first[i]
            );
            bad += 1;
        }
    }
    let mut total = 0u64;
    world.all_reduce_into(&bad, &mut total, SystemOperation::sum());
    let worst = slowest(world, worst);
    if plan.rank == 0 {
        if total > 0 {
            eprintln!("check FAILED: {}: {total} wrong elements", describe(plan));
        } else {
            let how = if arithmetic && worst > 0.0 {
                format!("within rounding (largest difference {worst:.2e})")
            } else {
                "exactly".to_string()
            };
            println!(
                "check passed: {}: every rank's output matches {} {how}",
                describe(plan),
                h.kind.library()
            );
        }
    }
    i32::from(total > 0)
}

/// Rank 0 enters the barrier schedule `HOLD` late; no rank may leave it before half of that.
fn check_barrier<T: Elem>(world: &SimpleCommunicator, plan: &Plan, b: &mut Buffers<T>) -> i32 {
    const HOLD: Duration = Duration::from_millis(250);
    world.barrier();
    let t = Instant::now();
    if plan.rank == 0 {
        std::thread::sleep(HOLD);
    }
    exec::run(world, plan, b);
    let waited = t.elapsed();
    let early = u64::from(waited < HOLD / 2);
    if early == 1 {
        eprintln!(
            "rank {}: left the barrier after {waited:?}, before rank 0 entered it (after {HOLD:?})",
            plan.rank
        );
    }
    let mut total = 0u64;
    world.all_reduce_into(&early, &mut total, SystemOperation::sum());
    if plan.rank == 0 {
        if total > 0 {
            eprintln!("check FAILED: {}: {total} ranks left early", describe(plan));
        } else {
            println!(
                "check passed: {}: no rank left before rank 0 entered ({HOLD:?} late)",
                describe(plan)
            );
        }
    }
    i32::from(total > 0)
}

fn bench<T: Elem>(world: &SimpleCommunicator, plan: &Plan, b: &mut Buffers<T>, iters: u64) -> i32 {
    let h = &plan.header;
    let warmup = (iters / 10).clamp(1, 100);
    let mut lib = vec![T::default(); b.bufs[1].len()];
    let input = b.bufs[0].clone();
    let time = |f: &mut dyn FnMut()| {
        for _ in 0..warmup {
            f();
        }
        world.barrier();
        let t = Instant::now();
        for _ in 0..iters {
            f();
        }
        slowest(world, t.elapsed().as_secs_f64()) / iters as f64 * 1e6
    };
    let ours = time(&mut || exec::run(world, plan, b));
    let theirs = time(&mut || library(world, plan, h.op, &input, &mut lib));
    if plan.rank == 0 {
        println!("{}, {iters} iterations", describe(plan));
        println!("  collc schedule: {ours:10.2} us per call");
        println!(
            "  {:<15} {theirs:10.2} us per call",
            format!("{}:", h.kind.library())
        );
    }
    0
}
