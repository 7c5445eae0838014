//! `ir::verify` on hand-built programs: a correct recursive-doubling allreduce is proved; each
//! kind of mistake (a dropped send, a duplicated reduce, a reordered combination, a race, a
//! cycle) is rejected with the code and location that explain it. The text form round-trips.

use collc::diag::{Code, SourceMap};
use collc::ir::verify::verify;
use collc::ir::{Buf, OpKind, Program, Slice, Spec, text};
use collc::sema::model::{CollectiveKind, Dtype, ReduceOp};

fn spec(kind: CollectiveKind, ranks: u32) -> Spec {
    Spec {
        kind,
        ranks,
        part_elements: 4,
        chunks_per_part: 1,
        dtype: Dtype::F32,
        op: ReduceOp::Sum,
        root: None,
    }
}

/// Recursive doubling for a power of two: copy in -> out, then per round send out, receive into
/// scratch, reduce. `swap_round` makes one rank combine in the other order at that round.
fn recursive_doubling(n: u32) -> Program {
    let mut p = Program::new("recursive_doubling", spec(CollectiveKind::Allreduce, n));
    let out = Slice::one(Buf::Output, 0);
    for r in 0..n {
        p.procs[r as usize].scratch = 1;
        let mut last = p.push(
            r,
            OpKind::Copy {
                dst: out,
                src: Slice::one(Buf::Input, 0),
            },
            vec![],
        );
        let mut mask = 1;
        let mut round = 0;
        while mask < n {
            let peer = r ^ mask;
            let s = p.push(
                r,
                OpKind::Send {
                    peer,
                    src: out,
                    tag: round,
                },
                vec![last],
            );
            let rv = p.push(
                r,
                OpKind::Recv {
                    peer,
                    dst: Slice::one(Buf::Scratch, 0),
                    tag: round,
                },
                vec![last],
            );
            last = p.push(
                r,
                OpKind::Reduce {
                    dst: out,
                    src: Slice::one(Buf::Scratch, 0),
                },
                vec![s, rv],
            );
            mask <<= 1;
            round += 1;
        }
    }
    p
}

fn codes(p: &Program) -> Vec<Code> {
    match verify(p) {
        Ok(_) => vec![],
        Err(f) => f.iter().map(|x| x.code).collect(),
    }
}

#[test]
fn recursive_doubling_is_proved() {
    for n in [2, 4, 8, 64] {
        let p = recursive_doubling(n);
        let proof = verify(&p).unwrap_or_else(|f| panic!("{n}: {f:#?}"));
        assert_eq!(proof.messages, (n * n.trailing_zeros()) as usize);
    }
}

#[test]
fn dropped_send_is_a_deadlock_at_the_receive() {
    let mut p = recursive_doubling(4);
    // Rank 2 no longer sends in round 1 (its op 4 is that send); its receive and reduce stay.
    p.procs[2].ops[4].kind = OpKind::Copy {
        dst: Slice::one(Buf::Scratch, 0),
        src: Slice::one(Buf::Scratch, 0),
    };
    let f = verify(&p).expect_err("must fail");
    assert_eq!(f[0].code, Code::IrDeadlock);
    assert_eq!(f[0].proc, 0, "{f:#?}");
    assert!(f[0].message.contains("never sent"), "{}", f[0].message);
}

#[test]
fn duplicated_reduce_is_rejected() {
    let mut p = recursive_doubling(4);
    let last = p.procs[1].ops.len() as u32 - 1;
    p.push(
        1,
        OpKind::Reduce {
            dst: Slice::one(Buf::Output, 0),
            src: Slice::one(Buf::Scratch, 0),
        },
        vec![last],
    );
    let f = verify(&p).expect_err("must fail");
    assert_eq!(f[0].code, Code::IrWrongResult);
    assert_eq!((f[0].proc, f[0].op), (1, Some(last + 1)));
    assert!(f[0].message.contains("twice"), "{}", f[0].message);
}

#[test]
fn reordered_combination_is_rejected() {
    // Rank 3 combines its own value last: (r2 + r3) first becomes ... a different tree.
    let n = 4;
    let mut p = recursive_doubling(n);
    // Make rank 3 start from scratch instead: receive first, then copy its input in and combine
    // into the received value, which changes the association in round 1 for rank 3 only.
    let proc = &mut p.procs[3];
    proc.scratch = 2;
    proc.ops.clear();
    let out = Slice::one(Buf::Output, 0);
    let s0 = Slice::one(Buf::Scratch, 0);
    let s1 = Slice::one(Buf::Scratch, 1);
    // Round 0 as usual.
    let c = p.push(
        3,
        OpKind::Copy {
            dst: out,
            src: Slice::one(Buf::Input, 0),
        },
        vec![],
    );
    let a = p.push(
        3,
        OpKind::Send {
            peer: 2,
            src: out,
            tag: 0,
        },
        vec![c],
    );
    let b = p.push(
        3,
        OpKind::Recv {
            peer: 2,
            dst: s0,
            tag: 0,
        },
        vec![c],
    );
    let d = p.push(3, OpKind::Reduce { dst: out, src: s0 }, vec![a, b]);
    // Round 1: send, receive, but then combine the received partial with rank 3's own input and
    // rank 2's input separately: ((r0 + r1) + r3) + r2 instead of (r2 + r3) + (r0 + r1).
    let e = p.push(
        3,
        OpKind::Send {
            peer: 1,
            src: out,
            tag: 1,
        },
        vec![d],
    );
    let f = p.push(
        3,
        OpKind::Recv {
            peer: 1,
            dst: s1,
            tag: 1,
        },
        vec![d],
    );
    let g = p.push(
        3,
        OpKind::Reduce {
            dst: s1,
            src: Slice::one(Buf::Input, 0),
        },
        vec![f],
    );
    let h = p.push(3, OpKind::Copy { dst: out, src: s1 }, vec![e, g]);
    let _ = h;
    let mut bad = p.clone();
    // Rank 3 now lacks r2: add it from the round-0 scratch.
    bad.push(3, OpKind::Reduce { dst: out, src: s0 }, vec![h]);
    let f = verify(&bad).expect_err("must fail");
    assert_eq!(f[0].code, Code::IrOrder, "{f:#?}");
    assert_eq!(f[0].proc, 3);
    assert!(f[0].message.contains("combines out[0]"), "{}", f[0].message);
}

#[test]
fn race_and_cycle_are_rejected() {
    let mut p = recursive_doubling(2);
    // Drop the dependency of the reduce on the send: the send may read out[0] after the reduce.
    p.procs[0].ops[3].deps = [2].into_iter().collect();
    assert_eq!(codes(&p)[0], Code::IrRace);
    let mut p = recursive_doubling(2);
    // Rank 0's send waits for its own reduce, which waits for rank 1's send... fine; make rank
    // 1's send wait for its reduce too: both wait for each other.
    p.procs[0].ops[1].deps = [3].into_iter().collect();
    p.procs[1].ops[1].deps = [3].into_iter().collect();
    p.procs[0].ops[3].deps = [2].into_iter().collect();
    p.procs[1].ops[3].deps = [2].into_iter().collect();
    assert_eq!(codes(&p)[0], Code::IrDeadlock);
}

#[test]
fn text_round_trips_and_spans_point_at_ops() {
    let p = recursive_doubling(4);
    let t = text::print(&p);
    let mut sources = SourceMap::new();
    let id = sources.add("rd.ir", t.clone());
    let parsed = text::parse(id, &t).unwrap_or_else(|d| panic!("{}", d.message));
    assert_eq!(parsed.program, p);
    assert_eq!(text::print(&parsed.program), t);
    let span = parsed.op_spans[1][2];
    assert!(
        t[span.range()].starts_with("2: recv scratch[0] <- 0 tag 0"),
        "{}",
        &t[span.range()]
    );
    let broken = t.replace(
        "2: recv scratch[0] <- 0 tag 0",
        "2: recv scratch[0] <- zero tag 0",
    );
    let id = sources.add("bad.ir", broken.clone());
    let d = text::parse(id, &broken).err().expect("parse error");
    assert_eq!(d.code, Code::IrSyntax);
    assert_eq!(&broken[d.primary.span.range()], "zero");
}

#[test]
fn allgather_and_broadcast_postconditions() {
    // Allgather on 2 ranks: each copies its input into its part and sends it to the other.
    let mut p = Program::new("pairwise", spec(CollectiveKind::Allgather, 2));
    for r in 0..2u32 {
        let own = Slice::one(Buf::Output, r);
        let c = p.push(
            r,
            OpKind::Copy {
                dst: own,
                src: Slice::one(Buf::Input, 0),
            },
            vec![],
        );
        p.push(
            r,
            OpKind::Send {
                peer: 1 - r,
                src: own,
                tag: 0,
            },
            vec![c],
        );
        p.push(
            r,
            OpKind::Recv {
                peer: 1 - r,
                dst: Slice::one(Buf::Output, 1 - r),
                tag: 0,
            },
            vec![],
        );
    }
    verify(&p).unwrap_or_else(|f| panic!("{f:#?}"));
    // Receiving into the wrong part is caught.
    let mut bad = p.clone();
    bad.procs[0].ops[2].kind = OpKind::Recv {
        peer: 1,
        dst: Slice::one(Buf::Output, 0),
        tag: 0,
    };
    assert!(codes(&bad).contains(&Code::IrRace) || codes(&bad).contains(&Code::IrWrongResult));
}

/// A one-step allreduce on 19 ranks: rank r receives every other input into scratch and adds
/// them to its own in the order r+1, r+2, ..., so ranks 1 to 17 each differ in order from rank
/// 0 (17 order findings, more than the verifier keeps); rank 18 skips its last addition. The
/// wrong result comes after the kept findings are full and must still be reported, since a
/// caller may accept a program whose findings are all order differences (`collc check` on an
/// MSCCL XML, E0052).
#[test]
fn a_wrong_result_after_many_order_differences_is_reported() {
    let n = 19u32;
    let build = |skip_last_add: bool| {
        let mut p = Program::new("one_step", spec(CollectiveKind::Allreduce, n));
        let out = Slice::one(Buf::Output, 0);
        for r in 0..n {
            p.procs[r as usize].scratch = n - 1;
            for k in 1..n {
                let src = Slice::one(Buf::Input, 0);
                p.push(
                    r,
                    OpKind::Send {
                        peer: (r + k) % n,
                        src,
                        tag: 0,
                    },
                    vec![],
                );
            }
            let mut last = p.push(
                r,
                OpKind::Copy {
                    dst: out,
                    src: Slice::one(Buf::Input, 0),
                },
                vec![],
            );
            for k in 1..n {
                // Slot k-1 holds rank r+k's input: rank r+k sent it as its (n-k)-th send.
                let dst = Slice::one(Buf::Scratch, k - 1);
                let rv = p.push(
                    r,
                    OpKind::Recv {
                        peer: (r + k) % n,
                        dst,
                        tag: 0,
                    },
                    vec![],
                );
                if skip_last_add && r == n - 1 && k == n - 1 {
                    continue;
                }
                last = p.push(r, OpKind::Reduce { dst: out, src: dst }, vec![last, rv]);
            }
        }
        p
    };
    let f = verify(&build(false)).expect_err("orders differ");
    assert!(
        f.len() == 16 && f.iter().all(|f| f.code == Code::IrOrder),
        "{f:#?}"
    );
    let f = verify(&build(true)).expect_err("rank 18 lacks a contribution");
    assert!(
        f.iter()
            .any(|f| f.code == Code::IrWrongResult && f.proc == n - 1),
        "{f:#?}"
    );
}
