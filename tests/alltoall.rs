//! All-to-all (issue 38): the collective in the language, its postcondition in `ir::verify`, and
//! the pairwise, Bruck and hierarchical families proved for every rank count from 2 to 64 (and
//! a few larger), on random box layouts and shuffled participants; wrong programs refused.

mod alltoall_support;

use alltoall_support::{check, checked, messages};
use collc::diag::Code;
use collc::ir::verify::verify;
use collc::ir::{Buf, OpKind, Program};
use collc::lower::lower_and_verify;
use collc::sema::model::{CollectiveKind, Dtype, Family, Model, ReduceOp};

fn bare(n: usize, family: Family) -> Model {
    Model::bare(
        CollectiveKind::Alltoall,
        n,
        3 * n as u64,
        Dtype::F32,
        ReduceOp::Sum,
        None,
        family,
    )
}

fn proved(m: &Model) -> Program {
    match lower_and_verify(m) {
        Ok((p, _)) => p,
        Err(d) => panic!("{}: {}", d[0].code, d[0].message),
    }
}

fn families() -> Vec<Family> {
    let mut f = vec![
        Family::Pairwise { concurrent: false },
        Family::Pairwise { concurrent: true },
        Family::Hierarchical,
    ];
    f.extend((2..=5).map(|radix| Family::Bruck { radix }));
    f
}

#[test]
fn every_family_is_proved_for_2_to_64_ranks() {
    for n in (1..=64).chain([100, 127, 128]) {
        for f in families() {
            let p = proved(&bare(n, f.clone()));
            let messages = verify(&p).expect("proved").messages;
            match f {
                Family::Pairwise { .. } | Family::Hierarchical => {
                    assert_eq!(messages, n * (n - 1), "{} n {n}", f.name())
                }
                Family::Bruck { radix } => {
                    // (radix - 1) messages per digit, fewer in the last digit when N is not a
                    // power of the radix: never more than that, and at least log_radix N.
                    let mut digits = 0;
                    while radix.pow(digits) < n as u64 {
                        digits += 1;
                    }
                    let most = n * (radix as usize - 1) * digits as usize;
                    assert!(messages <= most && messages >= n * digits as usize, "n {n}");
                }
                _ => unreachable!(),
            }
        }
    }
}

#[test]
fn shifted_pairwise_talks_to_one_peer_at_a_time() {
    let p = proved(&bare(6, Family::Pairwise { concurrent: false }));
    let ops = &p.procs[2].ops;
    // Step k's send waits for the receive of step k - 1.
    let recv_of_step = |k: usize| 2 + 2 * (k - 1);
    for k in 2..6 {
        let send = 1 + 2 * (k - 1);
        assert!(
            ops[send]
                .deps
                .as_slice()
                .contains(&(recv_of_step(k - 1) as u32)),
            "step {k}: {:?}",
            ops[send].deps.as_slice()
        );
        match ops[send].kind {
            OpKind::Send { peer, .. } => assert_eq!(peer as usize, (2 + k) % 6),
            _ => panic!("not a send"),
        }
    }
    let p = proved(&bare(6, Family::Pairwise { concurrent: true }));
    assert!(p.procs[2].ops.iter().all(|o| o.deps.as_slice().is_empty()));
}

/// Boxes of random sizes, each a switch at 300 GB/s, joined by 25 GB/s links to a core switch;
/// participants listed in a shuffled order, so a box's ranks are not consecutive.
fn boxed_source(sizes: &[usize], seed: u64, family: &str) -> String {
    let mut s = String::new();
    let total: usize = sizes.iter().sum();
    s.push_str(&format!(
        "topology t {{\n    compute gpu[{total}];\n    switch box[{}];\n    switch core;\n",
        sizes.len()
    ));
    let mut g = 0;
    for (b, &k) in sizes.iter().enumerate() {
        for _ in 0..k {
            s.push_str(&format!(
                "    link gpu[{g}] <-> box[{b}] : 300 GB/s;\n    link gpu[{g}] <-> core : 25 GB/s;\n"
            ));
            g += 1;
        }
    }
    let mut order: Vec<usize> = (0..total).collect();
    let mut x = seed;
    for i in (1..total).rev() {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        order.swap(i, (x >> 33) as usize % (i + 1));
    }
    let parts: Vec<String> = order.iter().map(|i| format!("gpu[{i}]")).collect();
    s.push_str("}\n");
    s.push_str(&format!(
        "collective alltoall {{ participants: [{}]; count: {}; dtype: f32; }}\nschedule {family}\n",
        parts.join(", "),
        total * 4
    ));
    s
}

#[test]
fn hierarchical_is_proved_on_random_boxes_and_shuffled_ranks() {
    let mut x = 7u64;
    for seed in 0..24u64 {
        x = x.wrapping_mul(0x9E3779B97F4A7C15).wrapping_add(seed);
        let boxes = 2 + (x >> 40) as usize % 4;
        let sizes: Vec<usize> = (0..boxes)
            .map(|b| 2 + ((x >> (8 * b)) as usize % 5))
            .collect();
        for family in ["hierarchical;", "pairwise;", "bruck { radix: 3; }"] {
            let m = check(&boxed_source(&sizes, seed, family));
            let p = proved(&m);
            if family == "hierarchical;" {
                // Per destination and source box: |P| - 1 gathers and one network message,
                // so as many messages as pairwise, but only one per (destination, source box)
                // crosses the network.
                let n: usize = sizes.iter().sum();
                assert!(p.name.contains(&format!("{boxes} boxes")), "{}", p.name);
                assert_eq!(
                    verify(&p).expect("proved").messages,
                    n * (n - 1),
                    "{sizes:?}"
                );
            }
        }
    }
}

#[test]
fn wrong_all_to_all_programs_are_refused() {
    // Rank 0 keeps block 1 of its input instead of receiving rank 1's block 0.
    let mut p = proved(&bare(2, Family::Pairwise { concurrent: true }));
    for op in &mut p.procs[1].ops {
        if let OpKind::Send { src, .. } = &mut op.kind {
            src.start = 1;
        }
    }
    let e = verify(&p).expect_err("a wrong block");
    assert!(e.iter().any(|f| f.code == Code::IrWrongResult), "{e:?}");
    // A block never delivered.
    let mut p = proved(&bare(3, Family::Pairwise { concurrent: true }));
    p.procs[0]
        .ops
        .retain(|o| !matches!(o.kind, OpKind::Copy { dst, .. } if dst.buf == Buf::Output));
    let e = verify(&p).expect_err("an unwritten slot");
    assert!(
        e.iter().any(|f| f.message.contains("never written")),
        "{e:?}"
    );
}

#[test]
fn size_is_the_per_rank_buffer_and_must_split_over_the_ranks() {
    let m = check(
        "topology t { compute g[4]; switch s; for i in 0..4 { link g[i] <-> s : 10 GB/s; } }\n\
         collective alltoall { size: 1 MiB; dtype: f32; }\nschedule pairwise;\n",
    );
    let c = m.collective.as_ref().expect("collective");
    assert_eq!(c.count, (1 << 20) / 4);
    let p = proved(&m);
    assert_eq!(p.spec.part_elements, c.count / 4);
    let (diagnostics, _) = checked(
        "topology t { compute g[3]; switch s; for i in 0..3 { link g[i] <-> s : 10 GB/s; } }\n\
         collective alltoall { count: 10; dtype: f32; }\nschedule bruck;\n",
    );
    assert!(
        diagnostics.iter().any(|d| d.code == Code::SizeNotDivisible),
        "{:?}",
        messages(&diagnostics)
    );
    // A family of another collective is refused.
    let (diagnostics, _) = checked(
        "topology t { compute g[4]; switch s; for i in 0..4 { link g[i] <-> s : 10 GB/s; } }\n\
         collective alltoall { count: 16; dtype: f32; }\nschedule ring;\n",
    );
    assert!(!diagnostics.is_empty());
}
