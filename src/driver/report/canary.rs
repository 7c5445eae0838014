//! The report section "canary": the parameters `schedule canary` resolved to and the closed
//! forms that follow from them on the file's network ([`crate::cost::canary`]): descriptor
//! memory per switch, multicast entries, bytes per packet and the goodput ceiling, each with
//! the parameters that made it, the fixed-point error bound, and what the P4 target's clock
//! packets and multicast groups cost. It needs no lowering (Canary is not lowered into the IR).

use super::Section;
use crate::cost::canary::{Network, figures, network};
use crate::diag::Diagnostic;
use crate::sema::model::{AutoOr, CanaryParams, CanaryRoots, Family, Model};
use crate::sema::units::{Dim, Quantity, fmt_rational};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::ToPrimitive;

fn time(v: &BigRational) -> String {
    if v == &BigRational::from_integer(0.into()) {
        return "0 ns".into();
    }
    Quantity {
        value: v.clone(),
        dim: Dim::TIME,
    }
    .to_string()
}

fn gbps(bytes_per_s: &BigRational) -> String {
    let v = bytes_per_s * BigRational::new(8.into(), 1_000_000_000.into());
    format!("{} Gb/s", fmt_rational(&v))
}

fn bytes(v: &BigRational) -> String {
    let kib = v / BigRational::from_integer(1024.into());
    format!("{} B ({} KiB)", fmt_rational(v), fmt_rational(&kib))
}

/// The section, or None for other families.
pub(crate) fn section(m: &Model) -> Result<Option<Section>, Vec<Diagnostic>> {
    let (Some(c), Some(topo), Some(s)) = (&m.collective, &m.topology, &m.schedule) else {
        return Ok(None);
    };
    let Family::Canary(p) = &s.family else {
        return Ok(None);
    };
    let Some(net) = network(m, topo, c) else {
        return Ok(None);
    };
    let mut lines = vec![parameters(p, c.dtype.name())];
    if c.kind == crate::sema::model::CollectiveKind::Reduce {
        lines.push(format!(
            "reduce (Section 6): the root rank leads every block; what goes down each tree is a header-only release ({} B) that frees the descriptors and ends the other ranks' part, not the result",
            net.overhead
        ));
    }
    if c.kind == crate::sema::model::CollectiveKind::Broadcast {
        lines.push(format!(
            "broadcast (Section 6): the root rank leads every block; the other ranks send header-only packets ({} B) that build each block's tree, and the root's data goes down it; nothing is reduced, so no fixed point is needed",
            net.overhead
        ));
    }
    if c.kind == crate::sema::model::CollectiveKind::Barrier {
        lines.push(format!(
            "barrier as a 0-byte allreduce (Section 6): one block, each host sending one header-only packet of {} B; done when every host has the block's result (every host counted); the closed forms below are those of the allreduce's data packets",
            net.overhead
        ));
    }
    lines.extend(closed_forms(p, &net, &topo.name));
    lines.extend(exploration(m, s.span)?);
    if let Some(f) = p.fixed_point {
        lines.push(fixed_point(f, c.ranks.len()));
    }
    let o = crate::target::Options::from_model(m, crate::sema::model::TargetKind::P4);
    lines.extend(crate::backend::p4::report(
        m,
        &crate::target::p4::options(&o),
    ));
    lines.push(
        "`collc build --target p4 -o DIR` emits the switch program, its entries and the host program; `collc sim` runs it at packet level"
            .into(),
    );
    Ok(Some(Section {
        title: "canary".into(),
        lines,
        warnings: Vec::new(),
    }))
}

/// Runs of the exploration.
const RUNS: u64 = 36;

/// The proof by exploration's lines, or E0049 with the failing run's setting.
fn exploration(m: &Model, span: crate::diag::Span) -> Result<Vec<String>, Vec<Diagnostic>> {
    exploration_of(m, span, &crate::canary::protocol::Protocol::paper())
}

/// [`exploration`] of `protocol`.
/// Where an E0049's replay command names the file; the command line puts the path in.
pub(crate) const FILE: &str = "<FILE>";

/// Puts `path` into the replay commands of E0049s in `d`.
pub(crate) fn name_file(d: &mut [Diagnostic], path: &str) {
    for x in d
        .iter_mut()
        .filter(|x| x.code == crate::diag::Code::CanaryCounterexample)
    {
        for n in &mut x.notes {
            *n = n.replace(FILE, path);
        }
    }
}

/// The E0049 of exploration run `st`, which failed with `why`.
fn counterexample(
    m: &Model,
    span: crate::diag::Span,
    params: &crate::sim::packet::PacketParams,
    st: &crate::sim::packet::explore::Setting,
    why: &[Diagnostic],
) -> Diagnostic {
    let timeout = match &m.schedule.as_ref().map(|s| &s.family) {
        Some(Family::Canary(p)) => p.timeout.clone(),
        _ => BigRational::from_integer(0.into()),
    };
    let reason = why
        .iter()
        .map(|d| d.message.clone())
        .collect::<Vec<_>>()
        .join("; ");
    Diagnostic::error(
        crate::diag::Code::CanaryCounterexample,
        span,
        format!("an execution of this Canary schedule fails: {reason}"),
    )
    .label("counterexample")
    .note(format!(
        "the failing run: {} (packet model: {})",
        st.describe(&timeout),
        params.describe()
    ))
    .note(format!(
        "replay this run alone: collc sim {FILE} --explore-run {}{}",
        st.seed,
        m.params
            .iter()
            .map(|(k, v)| format!(" --param {k}={v}"))
            .collect::<String>()
    ))
    .help("this is a bug in collc's Canary protocol or simulator: please report it with the file and this setting")
}

/// `collc sim FILE --explore-run SEED`: the exploration run with that seed alone, its
/// setting and outcome (an E0049 when it fails); None when the schedule is not Canary.
pub(crate) fn replay(
    m: &Model,
    span: crate::diag::Span,
    seed: u64,
) -> Option<Result<String, Vec<Diagnostic>>> {
    use crate::sim::packet::{PacketParams, explore};
    let params = crate::cost::canary::packet_model(m)
        .and_then(PacketParams::from_model)
        .unwrap_or_default();
    let protocol = crate::canary::protocol::Protocol::paper();
    let Some(Family::Canary(cp)) = m.schedule.as_ref().map(|s| &s.family) else {
        return None;
    };
    let timeout = cp.timeout.clone();
    let (st, r) = explore::replay(m, span, &params, seed, &protocol)?;
    Some(match r {
        Ok(run) => Ok(format!(
            "exploration run {}: {} (packet model: {})
passed: every rank holds every block's full reduction and no descriptor is left; {} events, {} packets, {} lost, finished at {} ps
",
            st.seed,
            st.describe(&timeout),
            params.describe(),
            run.events,
            run.packets,
            run.drops,
            run.end
        )),
        Err(why) => Err(vec![counterexample(m, span, &params, &st, &why)]),
    })
}

fn exploration_of(
    m: &Model,
    span: crate::diag::Span,
    protocol: &crate::canary::protocol::Protocol,
) -> Result<Vec<String>, Vec<Diagnostic>> {
    use crate::sim::packet::{PacketParams, explore};
    let params = crate::cost::canary::packet_model(m)
        .and_then(PacketParams::from_model)
        .unwrap_or_default();
    let Some(x) = explore::explore(m, span, &params, RUNS, protocol) else {
        return Ok(Vec::new());
    };
    if let Some((st, why)) = x.failure {
        return Err(vec![counterexample(m, span, &params, &st, &why)]);
    }
    let rules: Vec<String> = x.rules.iter().map(|(r, n)| format!("{r} {n}")).collect();
    let mut lines = vec![
        format!(
            "proof by exploration: {} packet-level runs of at most {} blocks on at most {} hosts{}, each ending with {} (each contribution once) and no descriptor left",
            x.runs,
            explore::BLOCKS,
            explore::HOSTS,
            if x.large > 0 {
                format!(
                    " ({} of them larger: up to {} blocks on {} hosts)",
                    x.large, x.most_blocks, x.most_hosts
                )
            } else {
                String::new()
            },
            match m.collective.as_ref().map(|c| c.kind) {
                Some(crate::sema::model::CollectiveKind::Reduce) => {
                    "the root holding every block's full reduction and every other rank its release"
                }
                Some(crate::sema::model::CollectiveKind::Broadcast) => {
                    "every rank holding every block of the root's data"
                }
                _ => "every rank holding every block's full reduction",
            }
        ),
        format!(
            "explored: {} runs with collisions (tables of 1 and 3 descriptors), {} with stragglers (timeouts 1/50 of t), {} under background traffic, {} losing 1% of packets per link, {} with a switch without hosts failing mid-run and losing packets ({} packets lost, {} stale descriptors reclaimed), ECMP and the model's routing, {}",
            x.colliding,
            x.straggling,
            x.congested,
            x.lossy,
            x.failing,
            x.lost,
            x.reclaimed,
            if x.congested > 0 {
                "a random placement per run"
            } else {
                "every host taking part"
            }
        ),
    ];
    for (b, before, took) in &x.boosted {
        let had = crate::diag::counted(*before, "run");
        lines.push(match took {
            Some(n) => format!(
                "adapted: {} in only {had} of the cycle, so {} more with {}",
                b.class(),
                crate::diag::counted(*n, "run"),
                b.how()
            ),
            None => format!(
                "not covered: {} in only {had} of the cycle, and in fewer than {} after {} more with {}",
                b.class(),
                explore::MIN_RUNS,
                explore::BOOST_TRIES,
                b.how()
            ),
        });
    }
    lines.push(format!("rules run: {}", rules.join(", ")));
    Ok(lines)
}

/// The error bound of float data carried as 32-bit fixed point with `f` fractional bits,
/// summed over `hosts` hosts (Section 6): each host rounds each element to the nearest multiple
/// of 2^-f, so a sum is within hosts x 2^-(f+1) of the exact sum of the inputs, and sums must
/// stay below 2^(31-f) in magnitude.
fn fixed_point(f: u32, hosts: usize) -> String {
    let one = BigRational::from_integer(1.into());
    let step = one / BigRational::from_integer(BigInt::from(2u64) << f);
    let bound = &step * BigRational::from_integer(hosts.into());
    format!(
        "fixed point (Section 6): {f} fractional bits; each host rounds an element by at most 2^-{} = {:.4e}, so a sum over {hosts} hosts is within {hosts} x 2^-{} = {:.4e} of the exact sum, and sums must stay within +-2^{} = {}",
        f + 1,
        step.to_f64().unwrap_or(0.0),
        f + 1,
        bound.to_f64().unwrap_or(0.0),
        31 - f.min(31),
        1u64 << (31 - f.min(31))
    )
}

fn parameters(p: &CanaryParams, dtype: &str) -> String {
    let roots = match &p.roots {
        CanaryRoots::RoundRobin => "round_robin over the most central switches".to_string(),
        CanaryRoots::Leader => "the switch of each block's leader".to_string(),
        CanaryRoots::Named(n) => format!("[{}] in turn", n.join(", ")),
    };
    let wire = match p.fixed_point {
        Some(f) => format!("{dtype} as 32-bit fixed point with {f} fractional bits"),
        None => dtype.to_string(),
    };
    let retransmit = match &p.retransmit {
        AutoOr::Auto => "auto".to_string(),
        AutoOr::Fixed(t) => time(t),
    };
    format!(
        "parameters: timeout t = {}, table_size {} descriptors, {} elements of {} B per packet ({wire}), {} of {} ports, leader {}, root {roots}, retransmit {retransmit}, retries {}, leader_delay r = {}",
        time(&p.timeout),
        p.table_size,
        p.elements_per_packet,
        p.wire_bytes,
        crate::diag::counted(p.shards, "shard"),
        p.ports,
        p.leader.name(),
        p.retries,
        time(&p.leader_delay)
    )
}

/// The figures' lines for `p` on `net` (the topology called `topo`).
pub(crate) fn closed_forms(p: &CanaryParams, net: &Network, topo: &str) -> Vec<String> {
    let f = figures(p, net);
    let payload = p.payload();
    let mut lines = vec![
        format!("network `{topo}`:"),
        format!(
            "  b = {} ({}): the fastest link of a participating host",
            gbps(&net.bandwidth),
            Quantity {
                value: net.bandwidth.clone(),
                dim: Dim::BANDWIDTH
            }
        ),
        format!(
            "  d = {} hops: {}",
            net.diameter,
            if net.diameter_exact {
                "the largest hop distance between two participants"
            } else {
                "at most: twice one participant's largest hop distance (too many distinct hosts to search exactly)"
            }
        ),
        format!("  l = {}: {}", time(&net.hop), net.hop_from),
        format!(
            "descriptor lifetime 2d(l + t) + r = 2 x {} x ({} + {}) + {} = {} (Section 3.2.2)",
            net.diameter,
            time(&net.hop),
            time(&p.timeout),
            time(&p.leader_delay),
            time(&f.lifetime)
        ),
        format!(
            "descriptor memory per switch b(2d(l + t) + r) = {} (Section 3.2.2, Little's law); about {} blocks in flight of {} B packets, against a table of {}",
            bytes(&f.memory),
            f.in_flight,
            f.packet,
            p.table_size
        ),
    ];
    if f.in_flight > BigInt::from(p.table_size) {
        lines.push(format!(
            "  the table holds fewer descriptors than blocks in flight: expect collisions and tree restoration (Section 3.2.1); a `table_size` of at least {} leaves room for them (hashing may still collide)",
            f.in_flight
        ));
    }
    lines.extend([
        format!(
            "multicast entries 2^(p/s) x s = 2^({}/{}) x {} = {} (Section 4.2; p the ports of the largest switch, s = shards; unsharded 2^{}{})",
            p.ports,
            p.shards,
            p.shards,
            f.multicast
                .as_ref()
                .map_or_else(|| "more than 2^64".to_string(), ToString::to_string),
            p.ports,
            if p.ports <= 64 {
                format!(" = {}", BigInt::from(1) << p.ports)
            } else {
                String::new()
            }
        ),
        format!(
            "bytes per packet: {payload} B payload ({} x {} B) + {} B = {} B, the {} B being {}",
            p.elements_per_packet,
            p.wire_bytes,
            net.overhead,
            f.packet,
            net.overhead,
            net.overhead_from
        ),
        format!(
            "goodput ceiling payload / (payload + overhead) x b = {payload} / {} x {} = {}",
            f.packet,
            gbps(&net.bandwidth),
            gbps(&f.goodput)
        ),
        format!(
            "retransmission timeout {} ({}); a block is re-issued at most {} time{} before it falls back to a host-based reduction",
            time(&f.retransmit),
            match p.retransmit {
                AutoOr::Auto =>
                    "auto: 2 RTT, the round trip being the descriptor lifetime (Section 6); the packet simulator detects losses as TCP does: a leader fails a generation when a later one of its generations completes first (RACK, RFC 8985), when a worker asks after its round trip, or when none of its first generations completes for one lifetime (re-issued ones: their RTO, RFC 6298); a worker asks for a result when a later result of the same leader came first, asks again when the answer to a later request came first, or when nothing came for one lifetime, waiting twice as long before each further ask; hosts pace their streams to leave twice the repair traffic the loss rate makes expected",
                AutoOr::Fixed(_) => "declared: every timer of the packet simulator's loss detection waits this long, without estimation or back-off",
            },
            p.retries,
            if p.retries == 1 { "" } else { "s" }
        ),
    ]);
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canary::protocol::Protocol;
    use crate::diag::{Code, SourceMap, Span};
    use crate::sim::packet::explore;

    #[test]
    fn a_broken_protocol_is_e0049_with_its_seed() {
        let src = "import fat_tree;
topology t = fat_tree(leaves: 2, hosts_per_leaf: 4, spines: 2, host_bw: 100 Gbps, spine_bw: 100 Gbps);
collective allreduce { size: 16 KiB; dtype: i32; op: sum; }
schedule canary { }
";
        let mut sources = SourceMap::new();
        let id = sources.add("t.coll", src.to_string());
        let m = crate::sema::check(&mut sources, id, &Default::default())
            .model
            .expect("checks");
        assert!(exploration_of(&m, Span::default(), &Protocol::paper()).is_ok());
        let err = exploration_of(&m, Span::default(), &Protocol::paper().without("restore"))
            .expect_err("caught");
        assert_eq!(err[0].code, Code::CanaryCounterexample);
        assert!(
            err[0]
                .notes
                .iter()
                .any(|n| n.contains("the failing run: seed ")),
            "{:?}",
            err[0]
        );
        let mut err = err;
        name_file(&mut err, "t.coll");
        let seed = err[0]
            .notes
            .iter()
            .find_map(|n| n.strip_prefix("replay this run alone: collc sim t.coll --explore-run "))
            .and_then(|s| s.parse::<u64>().ok())
            .expect("the replay command");
        // The replayed run is the failing one, with the same seed.
        assert_eq!(
            explore::replay(
                &m,
                Span::default(),
                &Default::default(),
                seed,
                &Protocol::paper().without("restore")
            )
            .map(|(st, r)| (st.seed, r.is_err())),
            Some((seed, true))
        );
        assert!(replay(&m, Span::default(), seed).is_some_and(|r| r.is_ok()));
    }
}
