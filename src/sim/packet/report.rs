//! What a packet-level run reports ([`PacketRun`]) and its text form ([`render`]): per-rank
//! finish times, goodput (the collective's data size over its time, in Gb/s as the paper plots
//! it), nccl-tests' algbw and busbw, the distribution of link utilisation (the paper's Fig. 7b
//! and 10b: one sample per directed link, its bytes on the wire over bandwidth x time, in ten
//! bins), the average network utilisation (the mean of those samples, as Section 5.2 computes
//! it), stalls (lossless flow control never drops, so drops are always 0 and said so), events,
//! and the Chrome trace (the flow model's [`LaneSpan`]s and JSON). Over several runs,
//! [`Summary`] gives the median, minimum and maximum, as the paper reports its five runs.

use super::job::{JobState, Kind};
use super::{Network, PacketParams};
use crate::sema::model::CollectiveKind;
use crate::sim::fluid::{FlowRun, LaneSpan, bus_factor, show_seconds};
use std::fmt::Write as _;

/// One program's part of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct JobRun {
    pub name: String,
    /// The compute node of each rank.
    pub hosts: Vec<u32>,
    /// Per process (ranks, then switch processes): when its last op completed, in ps.
    pub finish: Vec<u64>,
    pub ranks: u32,
    /// The collective's data size.
    pub bytes: u64,
    /// When its last op completed, in ps.
    pub end: u64,
    pub spans: Option<Vec<LaneSpan>>,
}

impl JobRun {
    pub fn seconds(&self) -> f64 {
        self.end as f64 * 1e-12
    }

    /// Data size over time, in bits per second.
    pub fn goodput(&self) -> f64 {
        if self.end == 0 {
            0.0
        } else {
            self.bytes as f64 * 8.0 / self.seconds()
        }
    }
}

/// A finished packet-level run.
#[derive(Debug, Clone, PartialEq)]
pub struct PacketRun {
    pub jobs: Vec<JobRun>,
    /// When the last job finished (the end of the run), ps.
    pub end: u64,
    /// Bytes on the wire per directed link (every packet: collective and background).
    pub link_bytes: Vec<u64>,
    pub events: u64,
    pub packets: u64,
    /// Messages of the programs, and of the background traffic.
    pub messages: u64,
    pub bg_hosts: u64,
    pub bg_messages: u64,
    /// Background payload delivered.
    pub bg_bytes: u64,
    /// Times a port had to wait for credit, and the total time ports waited (ps).
    pub stalls: u64,
    pub stall_ps: u64,
    /// Canary packets lost on links (the model's `loss`; flow control itself is lossless).
    pub drops: u64,
    pub seed: u64,
    /// How often each rule of Canary's switch table ran (empty without Canary jobs).
    pub rules: Vec<(String, u64)>,
    /// Canary's loss recovery, summed over its jobs (None without faults).
    pub recovery: Option<Recovery>,
}

/// What Canary's loss recovery did in a run (src/sim/packet/canary_leader.rs and
/// canary_worker.rs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Recovery {
    /// Generations the leaders failed by RACK and by their timers, how many of those had
    /// all their contributions after all, and blocks that fell back to the hosts.
    pub failed_rack: u64,
    pub failed_timer: u64,
    pub failed_spurious: u64,
    pub fallbacks: u64,
    /// Results workers asked for by RACK and by their timers, and asks whose result came
    /// down the tree after all.
    pub asked_rack: u64,
    pub asked_timer: u64,
    pub asked_spurious: u64,
    /// The share of each host link the streams left to repair, and the repair traffic
    /// expected there, per mille (the largest over the jobs; 0: unpaced).
    pub repair_share: u64,
    pub repair_expected: u64,
    /// The chance that a generation gets every contribution up, per million (the least over
    /// the jobs), and the most `retries` of a job.
    pub through: u64,
    pub retries: u32,
    /// Contributor recovery ran (`recovery: contributors`, or chosen by `auto`) on a job of
    /// `ranks` ranks: the bitmap bytes every packet carried, the data packets leaders dropped
    /// for holding a rank their sum had, and the floods that answered many askers of a
    /// finished block.
    pub contributors: bool,
    pub auto: bool,
    pub ranks: u32,
    pub dropped: u64,
    pub floods: u64,
}

impl PacketRun {
    /// The run's time, ps: its collective's, or with concurrent instances the harmonic mean of
    /// theirs, so that size over it is their average goodput (the paper's Fig. 10a).
    pub fn time(&self) -> u64 {
        match self.jobs.as_slice() {
            [] => 0,
            [one] => one.end,
            all => {
                let rate: f64 = all.iter().map(|j| 1.0 / (j.end.max(1) as f64)).sum();
                (all.len() as f64 / rate).round() as u64
            }
        }
    }

    /// Size over [`PacketRun::time`], in bits per second.
    pub fn goodput(&self) -> f64 {
        let (t, bytes) = (self.time(), self.jobs.first().map_or(0, |j| j.bytes));
        if t == 0 {
            0.0
        } else {
            bytes as f64 * 8.0 / (t as f64 * 1e-12)
        }
    }
}

/// Bins of the utilisation histogram: [0,10%), ..., [90%,100%].
pub const BINS: usize = 10;

/// Links per utilisation bin, from each directed link's busy share (a link at or above 100%
/// counts in the last bin).
pub fn bin_utilisation(shares: impl IntoIterator<Item = f64>) -> [u64; BINS] {
    let mut h = [0u64; BINS];
    for u in shares {
        let b = ((u * BINS as f64).floor().max(0.0) as usize).min(BINS - 1);
        h[b] += 1;
    }
    h
}

/// The histogram as report lines: a heading, then per bin the links, their share of all
/// `links` and a bar.
pub fn histogram_text(hist: &[u64; BINS], links: usize) -> String {
    let mut out = String::from(
        "link utilisation (directed links by share of the run spent sending, all traffic):\n",
    );
    let total = links.max(1) as f64;
    let widest = hist.iter().copied().max().unwrap_or(0).max(1) as f64;
    for (b, &c) in hist.iter().enumerate() {
        let bar = "#".repeat(((c as f64 / widest) * 40.0).round() as usize);
        let _ = writeln!(
            out,
            "  {:>3}-{:<4} {:>6} {:>5.1}% {bar}",
            b * 10,
            format!("{}%", (b + 1) * 10),
            c,
            c as f64 / total * 100.0
        );
    }
    out
}

/// The runs' link-utilisation distributions as an SVG histogram (one series per run), titled
/// with the schedule and subtitled with the model (`model`) the figures come from.
pub fn plot_utilisation(
    net: &crate::net::Net,
    runs: &[PacketRun],
    title: &str,
    model: &str,
) -> Result<String, String> {
    let series = runs
        .iter()
        .map(|r| (format!("seed {}", r.seed), r.histogram(net).to_vec()))
        .collect();
    plot_histograms(series, title, model)
}

/// Utilisation histograms (one series each) as an SVG chart.
pub fn plot_histograms(
    series: Vec<(String, Vec<u64>)>,
    title: &str,
    model: &str,
) -> Result<String, String> {
    let bins = (0..BINS)
        .map(|b| format!("{}-{}%", b * 100 / BINS, (b + 1) * 100 / BINS))
        .collect();
    let h = crate::plot::bars::Histogram {
        title: title.to_string(),
        subtitle: model.to_string(),
        x_desc: "link utilisation (share of the run each directed link spent sending)".into(),
        bins,
        series,
    };
    h.svg()
}

impl PacketRun {
    /// Per directed link, its share of the run spent sending (bytes x 8 / bandwidth / time).
    pub fn utilisation(&self, net: &crate::net::Net) -> Vec<f64> {
        let t = self.end as f64 * 1e-12;
        self.link_bytes
            .iter()
            .zip(&net.links)
            .map(|(&b, l)| {
                if t > 0.0 && l.bw > 0.0 {
                    b as f64 / (l.bw * t)
                } else {
                    0.0
                }
            })
            .collect()
    }

    /// Links per utilisation bin (a link at exactly 100% counts in the last).
    pub fn histogram(&self, net: &crate::net::Net) -> [u64; BINS] {
        bin_utilisation(self.utilisation(net))
    }

    /// The mean utilisation over all directed links.
    pub fn average_utilisation(&self, net: &crate::net::Net) -> f64 {
        let u = self.utilisation(net);
        u.iter().sum::<f64>() / u.len().max(1) as f64
    }

    /// Job `j` in the flow model's report shape (finish times in seconds, link bytes, spans), so
    /// algbw, busbw and the Chrome trace are computed as for flow runs.
    pub fn as_flow_run(&self, j: usize) -> FlowRun {
        let job = &self.jobs[j];
        FlowRun {
            finish: job.finish[..job.ranks as usize]
                .iter()
                .map(|&f| f as f64 * 1e-12)
                .collect(),
            link_bytes: self
                .link_bytes
                .iter()
                .enumerate()
                .filter(|x| *x.1 > 0)
                .map(|(l, &b)| (l as u32, b as f64))
                .collect(),
            messages: self.messages,
            spans: job.spans.clone(),
        }
    }

    /// Every job's timeline as one Chrome trace (job j's processes numbered after job j-1's).
    pub fn chrome_json(&self) -> Option<String> {
        let mut all = Vec::new();
        let mut offset = 0u32;
        for job in &self.jobs {
            for s in job.spans.as_ref()? {
                let mut s = s.clone();
                s.pid += offset;
                all.push(s);
            }
            offset += job.finish.len() as u32;
        }
        FlowRun {
            finish: Vec::new(),
            link_bytes: Vec::new(),
            messages: 0,
            spans: Some(all),
        }
        .chrome_json()
    }
}

/// Every completed op of a job as a timeline interval: lane 0 sends, 1 receives, 2 local
/// reductions and copies; `pid` is the process.
pub fn spans(js: &JobState) -> Vec<LaneSpan> {
    let mut out = Vec::with_capacity(js.ops());
    for (g, op) in js.ops.iter().enumerate() {
        if op.ended == u64::MAX {
            continue;
        }
        let (lane, name) = match op.kind {
            Kind::Send => (0, "send"),
            Kind::Recv => (1, "recv"),
            Kind::RecvReduce => (1, "recv_reduce"),
            Kind::Reduce => (2, "reduce"),
            Kind::Copy => (2, "copy"),
        };
        let p = op.proc;
        out.push(LaneSpan {
            pid: p,
            lane,
            name: name.to_string(),
            start: op.started as f64 * 1e-12,
            end: op.ended as f64 * 1e-12,
            args: vec![
                ("bytes".to_string(), serde_json::json!(op.bytes)),
                (
                    "op".to_string(),
                    serde_json::json!(g - js.base[p as usize] as usize),
                ),
            ],
        });
    }
    out
}

/// Median, minimum and maximum of job 0's time over runs (the median of an even count is the
/// lower middle run, an actual run).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub median: u64,
    pub min: u64,
    pub max: u64,
    pub bytes: u64,
}

impl Summary {
    pub fn of(runs: &[PacketRun]) -> Option<Summary> {
        let mut t: Vec<u64> = runs
            .iter()
            .filter(|r| !r.jobs.is_empty())
            .map(PacketRun::time)
            .collect();
        if t.is_empty() {
            return None;
        }
        t.sort_unstable();
        Some(Summary {
            median: t[(t.len() - 1) / 2],
            min: t[0],
            max: t[t.len() - 1],
            bytes: runs[0].jobs[0].bytes,
        })
    }

    /// Goodput in Gb/s of a time in ps.
    pub fn gbps(&self, t: u64) -> f64 {
        if t == 0 {
            0.0
        } else {
            self.bytes as f64 * 8.0 / (t as f64 * 1e-12) / 1e9
        }
    }
}

fn gbps(bits: f64) -> String {
    format!("{:.2} Gb/s", bits / 1e9)
}

/// The report of runs of one collective: the model line, then per run (one, or a table of
/// several and their median, min and max) the time and goodput; for the first run the per-rank
/// finish times, the link-utilisation histogram, the average utilisation and the busiest links.
pub fn render(
    network: &Network,
    params: &PacketParams,
    kind: CollectiveKind,
    runs: &[PacketRun],
) -> String {
    let mut out = String::new();
    let Some(first) = runs.first() else {
        return out;
    };
    let net = &network.net;
    let job = &first.jobs[0];
    let _ = writeln!(
        out,
        "packet model on `{}` ({} compute nodes, {} directed links; lossless credit flow control)\n  {}",
        network.name,
        network.hosts.len(),
        net.links.len(),
        params.describe()
    );
    // Runs that lowered their own schedule (random placement or roots) name it per run.
    let differs = runs.iter().any(|r| r.jobs[0].name != job.name);
    let _ = writeln!(
        out,
        "{} of {} B, schedule {}{}: {} ranks, {} background hosts",
        kind.name(),
        job.bytes,
        job.name,
        if differs {
            format!(
                " (the run with seed {}; each run lowers its own)",
                first.seed
            )
        } else {
            String::new()
        },
        job.ranks,
        first.bg_hosts
    );
    if first.jobs.len() > 1 {
        let goodputs: Vec<f64> = first.jobs.iter().map(JobRun::goodput).collect();
        let lo = goodputs.iter().copied().fold(f64::MAX, f64::min);
        let hi = goodputs.iter().copied().fold(0.0, f64::max);
        let _ = writeln!(
            out,
            "{} concurrent instances on disjoint hosts: average goodput {} (instances from {} to {}); a run's time below is the harmonic mean of the instances' times; details are instance 0's",
            first.jobs.len(),
            gbps(first.goodput()),
            gbps(lo),
            gbps(hi)
        );
    }
    if runs.len() > 1 {
        out.push_str("runs (seed: time, goodput):\n");
        for r in runs {
            let _ = writeln!(
                out,
                "  {}: {}, {}{}",
                r.seed,
                show_seconds(r.time() as f64 * 1e-12),
                gbps(r.goodput()),
                if differs {
                    format!(", {}", r.jobs[0].name)
                } else {
                    String::new()
                }
            );
        }
        if let Some(s) = Summary::of(runs) {
            let _ = writeln!(
                out,
                "over {} runs: median {} ({:.2} Gb/s), min {} ({:.2} Gb/s), max {} ({:.2} Gb/s)",
                runs.len(),
                show_seconds(s.median as f64 * 1e-12),
                s.gbps(s.median),
                show_seconds(s.min as f64 * 1e-12),
                s.gbps(s.min),
                show_seconds(s.max as f64 * 1e-12),
                s.gbps(s.max)
            );
        }
        let _ = writeln!(out, "details of the run with seed {}:", first.seed);
    }
    let flow = first.as_flow_run(0);
    let n = job.ranks as usize;
    let _ = writeln!(
        out,
        "time {} ({} ps), goodput {}, algbw {:.2} GB/s, busbw {:.2} GB/s",
        show_seconds(job.seconds()),
        job.end,
        gbps(job.goodput()),
        flow.algbw(job.bytes) / 1e9,
        flow.algbw(job.bytes) * bus_factor(kind, n) / 1e9
    );
    let _ = writeln!(
        out,
        "events {}, packets {}, messages {} (+{} background, {} B of background payload delivered)",
        first.events, first.packets, first.messages, first.bg_messages, first.bg_bytes
    );
    let _ = writeln!(
        out,
        "{}, credit stalls {} ({} of port time waiting)",
        if params.loss > 0.0 {
            format!(
                "Canary packets lost {} (loss {}% per link)",
                first.drops,
                params.loss * 100.0
            )
        } else {
            "queue drops 0 (lossless)".to_string()
        },
        first.stalls,
        show_seconds(first.stall_ps as f64 * 1e-12)
    );
    if let Some(r) = first.recovery {
        let _ = writeln!(
            out,
            "loss recovery (first run): {}{} generations failed ({} by the leaders' RACK, {} by their timers; {} had every contribution after all), {} blocks fell back to the hosts; {} results asked for ({} by the workers' RACK, {} by their timers; {} came down the tree after all)",
            if r.repair_share > 0 {
                format!(
                    "streams paced to {:.1}% of line rate, leaving {:.1}% to repair (twice the {:.1}% expected); ",
                    100.0 - r.repair_share as f64 / 10.0,
                    r.repair_share as f64 / 10.0,
                    r.repair_expected as f64 / 10.0
                )
            } else {
                String::new()
            },
            r.failed_rack + r.failed_timer,
            r.failed_rack,
            r.failed_timer,
            r.failed_spurious,
            r.fallbacks,
            r.asked_rack + r.asked_timer,
            r.asked_rack,
            r.asked_timer,
            r.asked_spurious
        );
        let p = r.through as f64 / 1e6;
        let _ = writeln!(
            out,
            "  a generation gets every contribution up with probability {} (over the links its contributions climb, from the routes of the first blocks)",
            if p < 0.001 {
                "below 0.001".to_string()
            } else {
                format!("{p:.3}")
            }
        );
        let keep = crate::sema::model::Recovery::own_links(params.loss, r.ranks);
        let why = if r.auto {
            format!(
                "; `recovery: auto` chose it: (1 - loss)^ranks = {} {} 1/2",
                if keep >= 0.001 {
                    format!("{keep:.3}")
                } else {
                    format!("{keep:.1e}")
                },
                if r.contributors { "<" } else { ">=" }
            )
        } else {
            String::new()
        };
        if r.contributors {
            let _ = writeln!(
                out,
                "  recovery: contributors (collc's departure from the paper: every packet a switch or leader sends carries a {} B bitmap of the ranks whose data it holds, a leader asks only the missing ranks{why}); {} data packets dropped for holding a rank the sum had, {} floods answered many askers of a lost result",
                r.ranks.div_ceil(8),
                r.dropped,
                r.floods
            );
        } else {
            let _ = writeln!(
                out,
                "  recovery: the paper's (Section 3.3: a failed block is re-sent by every rank{why})"
            );
        }
        if p < 0.5 && r.retries > 0 && !r.contributors {
            let _ = writeln!(
                out,
                "  note: re-issuing costs each worker 1/p = {} contributions on average, falling back to the hosts about 2 (its contribution and its share of the leader's answers): below p = 1/2, `retries: 0` is the cheaper recovery",
                if p < 0.001 {
                    "over 1000".to_string()
                } else {
                    format!("{:.1}", 1.0 / p)
                }
            );
        }
    }
    if !first.rules.is_empty() {
        let hits: Vec<String> = first
            .rules
            .iter()
            .map(|(r, n)| format!("{r} {n}"))
            .collect();
        let _ = writeln!(
            out,
            "canary switch rules run (first run): {}; postcondition checked: {}, no descriptor left",
            hits.join(", "),
            match kind {
                CollectiveKind::Reduce => {
                    "the root has every block's full reduction, every other rank its release"
                }
                CollectiveKind::Broadcast => "every rank has every block of the root's data",
                _ => "every rank has every block's full reduction",
            }
        );
    }
    out.push_str("Times:\n");
    for (r, f) in job.finish[..n].iter().enumerate() {
        let _ = writeln!(
            out,
            "Rank {r} ({}): {}",
            net.names[job.hosts[r] as usize],
            show_seconds(*f as f64 * 1e-12)
        );
    }
    out.push_str(&histogram_text(&first.histogram(net), net.links.len()));
    let _ = writeln!(
        out,
        "average network utilisation: {:.1}% over {} directed links",
        first.average_utilisation(net) * 100.0,
        net.links.len()
    );
    let mut util: Vec<(usize, f64)> = first.utilisation(net).into_iter().enumerate().collect();
    util.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out.push_str("busiest links:\n");
    for (l, u) in util.iter().take(5) {
        let _ = writeln!(out, "  {}: {:.1}%", net.link_name(*l as u32), u * 100.0);
    }
    out
}
