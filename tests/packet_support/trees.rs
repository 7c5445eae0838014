//! A stand-in for `schedule static_trees` until its lowering lands (src/lower, issue 15 point
//! 5): `trees` static in-network reduction trees on a two-level fat tree, built as IR with
//! switch processes, for the packet simulator's tests and benchmark. The vector is cut into
//! `blocks` blocks; block b goes up tree `b % trees` (PANAMA's round robin): every
//! participating leaf sums its hosts' block and sends it to the tree's root spine, which sums
//! the leaves and multicasts the result back down through the leaves to the hosts. Roots are
//! distinct spines (while there are enough) drawn by `seed`.

use collc::ir::{Buf, Deps, OpKind, Proc, ProcKind, Program, Slice, Spec};
use collc::net::Net;
use collc::sema::model::{CollectiveKind, Dtype, ReduceOp};
use collc::sim::packet::traffic::Rng;

/// The static-trees allreduce of `bytes` (i32 sum) for ranks on `hosts` (compute nodes of a
/// two-level fat tree `net` from the stdlib: hosts under `leaf[..]`, leaves under `spine[..]`).
pub fn static_trees(
    net: &Net,
    hosts: &[u32],
    trees: u32,
    blocks: u32,
    bytes: u64,
    seed: u64,
) -> Program {
    let n = hosts.len() as u32;
    let spec = Spec {
        kind: CollectiveKind::Allreduce,
        ranks: n,
        part_elements: bytes / 4,
        chunks_per_part: blocks,
        dtype: Dtype::I32,
        op: ReduceOp::Sum,
        root: None,
    };
    let mut p = Program::new(format!("static_trees (trees: {trees}, hand-built)"), spec);
    let leaf_of = |h: u32| {
        net.links
            .iter()
            .find(|l| l.from == h as usize)
            .map(|l| l.to)
            .expect("a host has a leaf")
    };
    // Participating leaves in first-seen order, each with its ranks.
    let mut leaves: Vec<(usize, Vec<u32>)> = Vec::new();
    for (r, &h) in hosts.iter().enumerate() {
        let l = leaf_of(h);
        match leaves.iter_mut().find(|x| x.0 == l) {
            Some(x) => x.1.push(r as u32),
            None => leaves.push((l, vec![r as u32])),
        }
    }
    let leaf_set: Vec<usize> = leaves.iter().map(|x| x.0).collect();
    let mut spines: Vec<usize> = (0..net.names.len())
        .filter(|&i| net.names[i].starts_with("spine"))
        .collect();
    Rng::new(seed).shuffle(&mut spines);
    let mut proc_of = std::collections::BTreeMap::new();
    let mut add = |p: &mut Program, node: usize, scratch: u32| -> u32 {
        *proc_of.entry(node).or_insert_with(|| {
            p.procs.push(Proc {
                kind: ProcKind::Switch(net.names[node].clone()),
                scratch,
                ops: Vec::new(),
            });
            (p.procs.len() - 1) as u32
        })
    };
    let leaf_procs: Vec<u32> = leaf_set
        .iter()
        .map(|&l| add(&mut p, l, 2 * blocks))
        .collect();
    let none = Deps::new;
    let one = |d: u32| Deps::from_slice(&[d]);
    for c in 0..blocks {
        let root = add(&mut p, spines[(c % trees) as usize % spines.len()], blocks);
        let (up, down) = (
            Slice::one(Buf::Scratch, c),
            Slice::one(Buf::Scratch, blocks + c),
        );
        for (li, (_, ranks)) in leaves.iter().enumerate() {
            let lp = leaf_procs[li];
            let mut last = None;
            for &r in ranks {
                p.push(
                    r,
                    OpKind::Send {
                        peer: lp,
                        src: Slice::one(Buf::Input, c),
                        tag: c,
                    },
                    none(),
                );
                let kind = match last {
                    None => OpKind::Recv {
                        peer: r,
                        dst: up,
                        tag: c,
                    },
                    Some(_) => OpKind::RecvReduce {
                        peer: r,
                        dst: up,
                        tag: c,
                    },
                };
                last = Some(p.push(lp, kind, last.map_or_else(none, one)));
            }
            let sent = p.push(
                lp,
                OpKind::Send {
                    peer: root,
                    src: up,
                    tag: c,
                },
                one(last.unwrap()),
            );
            let got = p.push(
                lp,
                OpKind::Recv {
                    peer: root,
                    dst: down,
                    tag: blocks + c,
                },
                one(sent),
            );
            for &r in ranks {
                p.push(
                    lp,
                    OpKind::Send {
                        peer: r,
                        src: down,
                        tag: blocks + c,
                    },
                    one(got),
                );
                p.push(
                    r,
                    OpKind::Recv {
                        peer: lp,
                        dst: Slice::one(Buf::Output, c),
                        tag: blocks + c,
                    },
                    none(),
                );
            }
        }
        let acc = Slice::one(Buf::Scratch, c);
        let mut last = None;
        for &lp in &leaf_procs {
            let kind = match last {
                None => OpKind::Recv {
                    peer: lp,
                    dst: acc,
                    tag: c,
                },
                Some(_) => OpKind::RecvReduce {
                    peer: lp,
                    dst: acc,
                    tag: c,
                },
            };
            last = Some(p.push(root, kind, last.map_or_else(none, one)));
        }
        for &lp in &leaf_procs {
            p.push(
                root,
                OpKind::Send {
                    peer: lp,
                    src: acc,
                    tag: blocks + c,
                },
                one(last.unwrap()),
            );
        }
    }
    p
}
