//! The per-message costs the topology does not give: a `model NAME: flow { ... }` declaration's
//! `overhead` (time added to every message on top of its route's link latencies: software and
//! NIC start-up; it overlaps with other messages, as the pipelining postal model's `alpha_p`)
//! and `gamma` (time per byte of a reduction), or their defaults: 1 us, a typical small-message
//! start-up of MPI or NCCL over InfiniBand, and 0 ns/B (reductions as fast as memory, ignored).
//! A model's `runtime: nccl | rccl` (and `proto`) charges a GPU runtime's costs instead
//! ([`super::gpu`]).

use crate::sema::model::{CostModel, CostModelKind, ModelParam};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{ToPrimitive, Zero};

/// Per-message overhead and reduction time of the flow-level model, with where they came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowParams {
    /// Seconds added to every message's route latency (inside a box, when `net_overhead` is
    /// set).
    pub overhead: BigRational,
    /// Seconds added instead to a message between two boxes ([`crate::net::Net::boxes`]);
    /// None: `overhead` for every message.
    pub net_overhead: Option<BigRational>,
    /// Seconds added once per call (a GPU runtime's launch latency).
    pub launch: BigRational,
    /// Bytes on the wire per byte of data (a GPU runtime protocol's flags); 1 otherwise.
    pub wire: BigRational,
    /// The GPU runtime whose costs these are, and the protocol (None: the fastest per size).
    pub runtime: Option<(super::gpu::Runtime, Option<super::gpu::Proto>)>,
    /// The share of their bandwidth that links inside a box and links of the network deliver
    /// ([`FlowParams::caps`]); 1 unless calibrated.
    pub box_efficiency: BigRational,
    pub net_efficiency: BigRational,
    /// The measurements these parameters were fitted to (`collc calibrate`), when they were:
    /// the model's figures are then its own, not the runtime's tables.
    pub calibrated: Option<String>,
    /// Seconds per byte of a reduction.
    pub gamma: BigRational,
    /// `model NAME` when declared, None for the defaults.
    pub declared: Option<String>,
    /// `routing: spray`: every message spread evenly over the equal-cost next hops
    /// ([`crate::net::Net::spread`]) instead of one ECMP path per pair ([`crate::net::Net::route`]).
    pub spray: bool,
}

impl Default for FlowParams {
    fn default() -> Self {
        FlowParams {
            overhead: BigRational::new(BigInt::from(1), BigInt::from(1_000_000)),
            net_overhead: None,
            launch: BigRational::zero(),
            wire: BigRational::from_integer(1.into()),
            runtime: None,
            box_efficiency: BigRational::from_integer(1.into()),
            net_efficiency: BigRational::from_integer(1.into()),
            calibrated: None,
            gamma: BigRational::zero(),
            declared: None,
            spray: false,
        }
    }
}

impl FlowParams {
    /// The parameters of a declared `flow` model (defaults for what it leaves out); None for
    /// other kinds.
    pub fn from_model(m: &CostModel) -> Option<FlowParams> {
        if m.kind != CostModelKind::Flow {
            return None;
        }
        let d = FlowParams::default();
        let get = |n: &str, dflt: BigRational| match m.params.get(n) {
            Some(ModelParam::Quantity(q)) => q.value.clone(),
            _ => dflt,
        };
        let word = |n: &str| match m.params.get(n) {
            Some(ModelParam::Word(w)) => Some(w.clone()),
            _ => None,
        };
        let runtime = word("runtime").and_then(|w| super::gpu::Runtime::parse(&w));
        let proto = word("proto").and_then(|w| super::gpu::Proto::from_word(&w));
        let opt = |n: &str| match m.params.get(n) {
            Some(ModelParam::Quantity(q)) => Some(q.value.clone()),
            _ => None,
        };
        Some(FlowParams {
            overhead: get("overhead", d.overhead),
            net_overhead: opt("net_overhead"),
            launch: get("launch", d.launch),
            gamma: get("gamma", d.gamma),
            declared: Some(m.name.clone()),
            runtime: runtime.map(|r| (r, proto)),
            box_efficiency: get("box_efficiency", d.box_efficiency),
            net_efficiency: get("net_efficiency", d.net_efficiency),
            calibrated: word("calibrated"),
            spray: word("routing").as_deref() == Some("spray"),
            ..d
        })
    }

    pub fn overhead_s(&self) -> f64 {
        self.overhead.to_f64().unwrap_or(0.0)
    }

    /// Link capacities as the simulators share them: each link's bandwidth times its class's
    /// efficiency (`net_efficiency` for a link that leaves a box, [`crate::net::boxes`];
    /// `box_efficiency` for the rest, every link of a topology without boxes).
    pub fn caps(&self, net: &super::Net) -> Vec<f64> {
        let b = self.box_efficiency.to_f64().unwrap_or(1.0);
        let n = self.net_efficiency.to_f64().unwrap_or(1.0);
        net.links
            .iter()
            .map(|l| {
                let inside = net.boxes.get(l.from) == net.boxes.get(l.to)
                    && net.boxes.get(l.from) != Some(&u32::MAX);
                l.bw * if inside { b } else { n }
            })
            .collect()
    }

    /// The overhead of a message from node `a` to node `b`: `net_overhead` between two boxes
    /// of `net` when the parameters have one, else `overhead`.
    pub fn overhead_between(&self, net: &super::Net, a: usize, b: usize) -> &BigRational {
        match &self.net_overhead {
            Some(o) if net.crosses(a, b) => o,
            _ => &self.overhead,
        }
    }

    pub fn gamma_s(&self) -> f64 {
        self.gamma.to_f64().unwrap_or(0.0)
    }

    /// One line naming the model and its parameters, e.g. for a report's header.
    pub fn describe(&self) -> String {
        let from = match &self.declared {
            Some(n) => format!("model `{n}`"),
            None => "defaults: no `flow` model declared".to_string(),
        };
        let from = match &self.calibrated {
            Some(log) => format!("{from}, calibrated from {log}"),
            None => from,
        };
        if let Some((rt, proto)) = self.runtime {
            let proto = match proto {
                Some(p) => format!("protocol {}", p.name()),
                None => "the fastest protocol at each size, as the runtime's tuner picks".into(),
            };
            let costs = match &self.calibrated {
                Some(_) => format!(
                    "launch {} ns, steps {} ns inside a box and {} ns over the network, links at {} inside a box and {} over the network",
                    fmt_ns(&self.launch),
                    fmt_ns(&self.overhead),
                    fmt_ns(self.net_overhead.as_ref().unwrap_or(&self.overhead)),
                    crate::sema::units::fmt_rational(&self.box_efficiency),
                    crate::sema::units::fmt_rational(&self.net_efficiency),
                ),
                None => format!(
                    "its tuning tables' launch and per-step latencies (inside a box, over the network), links inside a box at {} of their rate (its topology's per-link figure)",
                    crate::sema::units::fmt_rational(&rt.box_efficiency())
                ),
            };
            return format!(
                "GPU runtime {}: {costs}, {proto}; gamma {} ns/B{} ({from})",
                rt.name(),
                fmt_ns(&self.gamma),
                self.routes_note()
            );
        }
        format!(
            "overhead {} ns per message, gamma {} ns/B{} ({from})",
            fmt_ns(&self.overhead),
            fmt_ns(&self.gamma),
            self.routes_note()
        )
    }

    /// How messages are routed, for a figure's header: empty under the default (ECMP).
    pub fn routes_note(&self) -> &'static str {
        if self.spray {
            ", messages spread over equal-cost paths (routing: spray)"
        } else {
            ""
        }
    }
}

/// Seconds as nanoseconds, with up to three decimals.
pub fn fmt_ns(s: &BigRational) -> String {
    let v = s.to_f64().unwrap_or(0.0) * 1e9;
    let t = format!("{v:.3}");
    t.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The flow parameters a file's figures use: the model `asked` for (`--model NAME`) when it is
/// a `flow` model, else the `sim` target's `model` when it is one, else the only declared
/// `flow` model, else the defaults.
pub fn for_file(m: &crate::sema::model::Model, asked: Option<&str>) -> FlowParams {
    let named = |n: &str| {
        m.models
            .iter()
            .find(|x| x.name == n)
            .and_then(FlowParams::from_model)
    };
    let target = m.sim_target_model();
    let flows: Vec<&CostModel> = m
        .models
        .iter()
        .filter(|x| x.kind == CostModelKind::Flow)
        .collect();
    let mut p = asked
        .and_then(named)
        .or_else(|| target.and_then(named))
        .or_else(|| match flows.as_slice() {
            [one] => FlowParams::from_model(one),
            _ => None,
        })
        .unwrap_or_default();
    // Under a runtime, paths that run one simulation (`collc sim`, the report) get its steps
    // under the declared protocol, or under `auto` the protocol the schedule's MSCCL XML names
    // (the `target msccl` block's, Simple by default), as `choose::evaluate` charges schedules
    // that run as XML; it weighs the runtime's own algorithms' protocols itself.
    if let Some((rt, proto)) = p.runtime {
        let spans = super::file_spans_boxes(m);
        let xml = crate::backend::msccl::Options::from_model(m).proto;
        let mut q = rt.params(proto.unwrap_or(xml), spans, &p);
        q.runtime = Some((rt, proto));
        p = q;
    }
    p
}
