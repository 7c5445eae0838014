//! The ring search on hand-computed cases: the channel count and the bound it reaches.

use super::*;
use crate::forest::report::ring_cut;
use num_traits::One;

fn topology(src: &str) -> (Topology, Vec<NodeId>) {
    let m = crate::sema::checked(src);
    let ranks = m.collective.expect("a collective").ranks;
    (m.topology.expect("a topology"), ranks)
}

/// Boxes of `gpus` GPUs on an NVSwitch at 300 GB/s; the first `nics` GPUs of each box have a
/// 25 GB/s NIC on one InfiniBand switch.
fn boxes(boxes: usize, gpus: usize, nics: usize) -> String {
    let mut s = format!(
        "topology t {{ compute gpu[{boxes}][{gpus}]; switch nvs[{boxes}]; switch ib; \
         for b in 0..{boxes} {{ for i in 0..{gpus} {{ link gpu[b][i] <-> nvs[b] : 300 GB/s; }} }}"
    );
    if nics > 0 {
        s.push_str(&format!(
            " switch nic[{boxes}][{nics}]; for b in 0..{boxes} {{ for i in 0..{nics} {{ \
             link gpu[b][i] <-> nic[b][i] : 25 GB/s; link nic[b][i] <-> ib : 25 GB/s; }} }}"
        ));
    }
    s.push_str(" } collective allgather { size: 1 MiB; dtype: f32; } schedule ring;");
    s
}

/// The rings' bound as an algorithmic bandwidth, GB/s: N/(N-1) / load.
fn algbw(n: usize, load: &BigRational) -> BigRational {
    BigRational::from_integer(n.into())
        / BigRational::from_integer((n - 1).into())
        / load
        / BigRational::from_integer(1_000_000_000.into())
}

/// The report's best-ring bound, GB/s: N/(N-1) x the weakest separating cut.
fn ring_bound(topo: &Topology, ranks: &[NodeId]) -> BigRational {
    let lambda = ring_cut(topo, ranks).expect("a cut").bandwidth;
    let n = ranks.len();
    BigRational::from_integer(n.into()) / BigRational::from_integer((n - 1).into()) * lambda
        / BigRational::from_integer(1_000_000_000.into())
}

fn every_ring_visits_every_rank(ch: &Channels, n: usize) {
    for r in &ch.rings {
        let mut seen = r.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..n as u32).collect::<Vec<_>>());
    }
}

fn int(x: i64) -> BigRational {
    BigRational::from_integer(x.into())
}

#[test]
fn one_box_keeps_one_ring_at_the_gpu_link_rate() {
    let (t, ranks) = topology(&boxes(1, 8, 0));
    let ch = search(&Net::new(&t), &ranks, MAX_CHANNELS);
    every_ring_visits_every_rank(&ch, 8);
    assert_eq!(ch.rings.len(), 1);
    assert_eq!(ch.rings[0], (0..8).collect::<Vec<u32>>());
    // 8/7 x 300 GB/s.
    assert_eq!(algbw(8, &ch.load), int(2400) / int(7));
    assert_eq!(algbw(8, &ch.load), ring_bound(&t, &ranks));
}

#[test]
fn two_boxes_use_one_channel_per_nic() {
    for (nics, channels, cut) in [(1usize, 1usize, 25i64), (2, 2, 50), (8, 8, 200)] {
        let (t, ranks) = topology(&boxes(2, 8, nics));
        let ch = search(&Net::new(&t), &ranks, MAX_CHANNELS);
        every_ring_visits_every_rank(&ch, 16);
        assert_eq!(ch.rings.len(), channels, "{nics} NICs");
        // 16/15 x the box's NICs.
        assert_eq!(algbw(16, &ch.load), int(16 * cut) / int(15), "{nics} NICs");
        assert_eq!(algbw(16, &ch.load), ring_bound(&t, &ranks), "{nics} NICs");
    }
}

#[test]
fn the_paper_dgx_a100_reaches_its_ring_bound() {
    // Two DGX A100 boxes, NICs on two rails (even and odd GPUs): 213.33 GB/s, as the
    // ForestColl paper computes (Section 5.3).
    let (t, ranks) = topology(
        "import dgx_a100; topology a = dgx_a100(clusters: 2); \
         collective allgather { size: 1 MiB; dtype: f32; } schedule ring;",
    );
    let ch = search(&Net::new(&t), &ranks, MAX_CHANNELS);
    every_ring_visits_every_rank(&ch, 16);
    assert_eq!(ch.rings.len(), 8);
    assert_eq!(algbw(16, &ch.load), int(640) / int(3));
}

#[test]
fn a_torus_rings_use_every_link_of_a_node() {
    // 4x4 torus at 10 GB/s: a node's 4 links out bound every ring set at 4 x 10 x 16/15.
    let (t, ranks) = topology(
        "import torus; topology t = torus2d(x: 4, y: 4, bw: 10 GB/s); \
         collective allgather { size: 1 MiB; dtype: f32; } schedule ring;",
    );
    let ch = search(&Net::new(&t), &ranks, MAX_CHANNELS);
    every_ring_visits_every_rank(&ch, 16);
    assert_eq!(ring_bound(&t, &ranks), int(640) / int(15));
    assert_eq!(
        algbw(16, &ch.load),
        ring_bound(&t, &ranks),
        "{:?}",
        ch.rings
    );
}

#[test]
fn a_fixed_count_lays_exactly_that_many() {
    let (t, ranks) = topology(&boxes(2, 4, 2));
    let net = Net::new(&t);
    for k in [1, 3, 5] {
        let ch = search_exactly(&net, &ranks, k);
        assert_eq!(ch.rings.len(), k);
        every_ring_visits_every_rank(&ch, 8);
    }
    let _ = BigRational::one();
}

/// `boxes` boxes of `gpus` GPUs (NVSwitch at 300 GB/s, a 25 GB/s NIC per GPU) on a two-level
/// fat tree of 25 GB/s links: `per_leaf` boxes on each leaf, every leaf on `spines` spines.
fn fat_tree(boxes: usize, gpus: usize, per_leaf: usize, spines: usize) -> String {
    format!(
        "topology t {{ compute gpu[{boxes}][{gpus}]; switch nvs[{boxes}]; \
         switch nic[{boxes}][{gpus}]; switch leaf[{leaves}]; switch spine[{spines}]; \
         for b in 0..{boxes} {{ for i in 0..{gpus} {{ link gpu[b][i] <-> nvs[b] : 300 GB/s; \
         link gpu[b][i] <-> nic[b][i] : 25 GB/s; \
         link nic[b][i] <-> leaf[floor(b / {per_leaf})] : 25 GB/s; }} }} \
         for l in 0..{leaves} {{ for s in 0..{spines} {{ link leaf[l] <-> spine[s] : 25 GB/s; }} }} }} \
         collective allgather {{ size: 1 MiB; dtype: f32; }} schedule ring;",
        leaves = boxes / per_leaf
    )
}

#[test]
fn rings_crossing_a_fat_tree_do_not_share_an_uplink() {
    // 256 GPUs on the 1,024-GPU example's fat tree (four boxes per leaf, 32 spines): the
    // rings cross between leaves 32 times per channel and hash onto the spines; the repair
    // re-pairs the GPUs that cross so that no two crossings share a link, and four channels
    // load every link they use once: the rails' 4 x 25 GB/s x 256/255.
    let (t, ranks) = topology(&fat_tree(32, 8, 4, 32));
    let ch = search_exactly(&Net::new(&t), &ranks, 4);
    every_ring_visits_every_rank(&ch, 256);
    assert_eq!(algbw(256, &ch.load), int(100 * 256) / int(255));
}

#[test]
fn rings_on_a_fat_tree_take_every_rail() {
    // 128 and 256 GPUs, eight NICs per box: eight channels, each crossing between boxes
    // through its own NIC and no uplink shared, reach the boxes' 8 x 25 GB/s x n/(n-1). At 256
    // GPUs, laid greedily, the eighth ring finds one box whose free NICs force it onto a NIC an
    // earlier ring uses (100 GB/s of 200), and `auto` took 31 channels (193.75 GB/s), which the
    // flow engine runs for minutes per size: repairing the earlier rings makes room.
    for boxes in [16, 32] {
        let n = boxes * 8;
        let (t, ranks) = topology(&fat_tree(boxes, 8, 4, 32));
        let ch = search(&Net::new(&t), &ranks, MAX_CHANNELS);
        every_ring_visits_every_rank(&ch, n);
        assert_eq!(ch.rings.len(), 8, "{n} GPUs");
        assert_eq!(algbw(n, &ch.load), int(200 * n as i64) / int(n as i64 - 1));
    }
}

#[test]
fn the_repair_floor_is_a_lone_ranks_single_link_one_hop_up() {
    // h0..h2 each have one link to the switch; h3 has two (to the switch and to h2's side).
    let (topo, ranks) = topology(
        "topology t { compute h[4]; switch s; switch t2; \
         for i in 0..4 { link h[i] <-> s : 100 Gbps; } link h[3] <-> t2 : 100 Gbps; \
         link t2 <-> s : 50 Gbps; } \
         collective allgather { size: 1 MiB; dtype: f32; } schedule ring;",
    );
    let net = Net::new(&topo);
    let routes = Routes::new(&net, &ranks, None);
    let one = |hops: u32| (f64::from(hops) / 12.5e9).to_bits();
    let mut base = vec![0u32; net.links.len()];
    assert_eq!(unclash::floor(&routes, &base), one(1));
    // Two hops of earlier channels on h1's link out raise it to three.
    let out = (0..net.links.len())
        .find(|&l| net.names[net.links[l].from] == "h[1]")
        .unwrap();
    base[out] = 2;
    assert_eq!(unclash::floor(&routes, &base), one(3));
    // h3's links are not forced (it has two each way): hops on them leave the floor alone.
    for (l, link) in net.links.iter().enumerate() {
        if net.names[link.from] == "h[3]" {
            base[l] = 7;
        }
    }
    assert_eq!(unclash::floor(&routes, &base), one(3));
}
