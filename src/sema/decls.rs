//! Cost-model (`model NAME: KIND { ... }`) and target (`target KIND { ... }`) declarations.
//! Parameters are stored in base units with defaults filled in, so every consumer sees the same
//! values. LogGP defaults are LogGOPSim's (L=2500, o=1500, g=1000 ns, G=6 ns/B, O=0, S=65535 B).

use super::elab::Elab;
use super::model::{CostModel, CostModelKind, ModelParam, Target, TargetKind};
use super::units::{Dim, Quantity, unit};
use crate::diag::{Code, Diagnostic, Span};
use crate::syntax::ast::{ExprKind, Ident, Prop};
use num_rational::BigRational;
use num_traits::Signed;
use std::collections::BTreeMap;

/// A parameter: name, dimension (None for a word), default as written, allowed words, and
/// whether it must be at least 1 (counts) rather than merely not negative.
struct P {
    name: &'static str,
    dim: Option<Dim>,
    default: Option<&'static str>,
    words: &'static [&'static str],
    at_least_one: bool,
    /// Absent means "let collc choose" (no default, not required).
    optional: bool,
}

const fn q(name: &'static str, dim: Dim, default: Option<&'static str>) -> P {
    P {
        name,
        dim: Some(dim),
        default,
        words: &[],
        at_least_one: false,
        optional: false,
    }
}

const fn count(name: &'static str, default: &'static str) -> P {
    P {
        name,
        dim: Some(Dim::NONE),
        default: Some(default),
        words: &[],
        at_least_one: true,
        optional: false,
    }
}

const fn opt(name: &'static str, dim: Dim) -> P {
    P {
        name,
        dim: Some(dim),
        default: None,
        words: &[],
        at_least_one: false,
        optional: true,
    }
}

const fn w(name: &'static str, words: &'static [&'static str], default: Option<&'static str>) -> P {
    P {
        name,
        dim: None,
        default,
        words,
        at_least_one: false,
        optional: false,
    }
}

const T: Dim = Dim::TIME;
const IB: Dim = Dim::INV_BANDWIDTH;
const POSTAL: &[P] = &[
    q("alpha", T, None),
    q("beta", IB, None),
    q("gamma", IB, Some("0 ns/B")),
];
const PIPELINING: &[P] = &[
    q("alpha_p", T, None),
    q("alpha_r", T, None),
    q("beta", IB, None),
    q("gamma", IB, Some("0 ns/B")),
];
const LOGGP: &[P] = &[
    q("L", T, Some("2500 ns")),
    q("o", T, Some("1500 ns")),
    q("g", T, Some("1000 ns")),
    q("G", IB, Some("6 ns/B")),
    q("O", IB, Some("0 ns/B")),
    q("S", Dim::SIZE, Some("65535 B")),
];
/// The packet-level network model (`crate::sim::packet`); the defaults are explained in
/// `crate::sim::packet::params` and docs/language.md.
const PACKET: &[P] = &[
    q("mtu", Dim::SIZE, Some("1081 B")),
    q("header", Dim::SIZE, Some("57 B")),
    q("queue", Dim::SIZE, Some("64 KiB")),
    q("switch_delay", T, Some("100 ns")),
    q("aggregation_delay", T, Some("0 ns")),
    q("overhead", T, Some("100 ns")),
    q("gamma", IB, Some("0 ns/B")),
    w(
        "routing",
        &["adaptive", "ecmp", "minimal"],
        Some("adaptive"),
    ),
    w("placement", &["declared", "random"], Some("declared")),
    q("background", Dim::NONE, Some("0")),
    q("loss", Dim::NONE, Some("0")),
    q("concurrent", Dim::NONE, Some("1")),
    q("noise", Dim::NONE, Some("0")),
    q("noise_delay", T, Some("1 us")),
    q("background_hosts", Dim::NONE, Some("0")),
    q("background_size", Dim::SIZE, Some("64 KiB")),
    w(
        "background_peers",
        &["congesting", "all"],
        Some("congesting"),
    ),
];
const FLOW: &[P] = &[
    q("overhead", T, Some("1 us")),
    q("gamma", IB, Some("0 ns/B")),
    // No defaults: absent means no GPU runtime, unless the file targets MSCCL
    // (`net::params::for_file`), and the fastest protocol.
    P {
        name: "runtime",
        dim: None,
        default: None,
        words: &["none", "nccl", "rccl"],
        at_least_one: false,
        optional: true,
    },
    P {
        name: "proto",
        dim: None,
        default: None,
        words: &["auto", "simple", "ll", "ll128"],
        at_least_one: false,
        optional: true,
    },
    // What `collc calibrate` writes: the overhead of a message between boxes, the launch
    // latency per call, the links' efficiencies and the log they were fitted to.
    opt("net_overhead", T),
    q("launch", T, Some("0 ns")),
    q("box_efficiency", Dim::NONE, Some("1")),
    q("net_efficiency", Dim::NONE, Some("1")),
    // How messages take equal-cost paths: one per pair by a hash, or spread over all of them.
    w("routing", &["ecmp", "spray"], Some("ecmp")),
    P {
        name: "calibrated",
        dim: None,
        default: None,
        words: &[],
        at_least_one: false,
        optional: true,
    },
];
const MSCCL: &[P] = &[
    w("proto", &["simple", "ll", "ll128"], Some("simple")),
    // No default: absent means the fewest channels that fit (`backend::msccl::AUTO_CHANNELS`).
    P {
        name: "channels",
        dim: Some(Dim::NONE),
        default: None,
        words: &[],
        at_least_one: true,
        optional: true,
    },
    count("instances", "1"),
    w("inplace", &["true", "false"], Some("false")),
    q("min_bytes", Dim::SIZE, Some("0 B")),
    q("max_bytes", Dim::SIZE, Some("0 B")),
    count("max_steps", "64"),
];
const SIM: &[P] = &[w("model", &[], None)];
/// `target p4`: the architecture, the limits the program must fit (`crate::backend::p4`), the
/// period of the clock packets that fire a switch's timeouts, and the hosts' retransmission
/// timeout on the target (default: the schedule's).
const P4: &[P] = &[
    w("arch", &["v1model"], Some("v1model")),
    w("limits", &["bmv2", "tofino"], Some("bmv2")),
    q("clock_period", T, Some("10 us")),
    P {
        name: "retransmit",
        dim: Some(T),
        default: None,
        words: &[],
        at_least_one: false,
        optional: true,
    },
];

fn model_params(k: CostModelKind) -> &'static [P] {
    match k {
        CostModelKind::Postal => POSTAL,
        CostModelKind::PipeliningPostal => PIPELINING,
        CostModelKind::LogGP => LOGGP,
        CostModelKind::Flow => FLOW,
        CostModelKind::Packet => PACKET,
    }
}

fn target_params(k: TargetKind) -> &'static [P] {
    match k {
        TargetKind::Msccl => MSCCL,
        TargetKind::Sim => SIM,
        TargetKind::P4 => P4,
        TargetKind::Mpi | TargetKind::Goal => &[],
    }
}

/// Properties of a `model NAME: kind { ... }` block, each with its allowed words (empty for
/// quantities), for the language server's completion.
pub fn model_properties(k: CostModelKind) -> Vec<(&'static str, &'static [&'static str])> {
    model_params(k).iter().map(|p| (p.name, p.words)).collect()
}

/// Properties of a `target kind { ... }` block, as [`model_properties`].
pub fn target_properties(k: TargetKind) -> Vec<(&'static str, &'static [&'static str])> {
    target_params(k).iter().map(|p| (p.name, p.words)).collect()
}

fn parse_default(s: &str, dim: Dim) -> Quantity {
    // Defaults are written "<number> <unit>", or a bare number for dimensionless ones.
    let (num, u) = s.split_once(' ').unwrap_or((s, ""));
    let value = crate::syntax::ast::parse_number(num);
    if dim == Dim::NONE {
        return Quantity::number(value);
    }
    let factor = unit(u)
        .map(|x| x.0)
        .unwrap_or_else(|| BigRational::from_integer(1.into()));
    Quantity {
        value: value * factor,
        dim,
    }
}

impl Elab<'_> {
    fn params(
        &mut self,
        props: &[Prop],
        spec: &[P],
        what: &str,
        span: Span,
    ) -> Option<BTreeMap<String, ModelParam>> {
        let names: Vec<&str> = spec.iter().map(|p| p.name).collect();
        let given = self.props(props, &names, what);
        let mut out = BTreeMap::new();
        let mut ok = true;
        for p in spec {
            let v = match (given.get(p.name), p.dim) {
                (Some(g), Some(dim)) => {
                    match self.eval_quantity(&g.value, dim, &format!("`{}`", p.name)) {
                        Some(v)
                            if p.at_least_one
                                && (v < BigRational::from_integer(1.into()) || !v.is_integer()) =>
                        {
                            let shown = super::units::fmt_rational(&v);
                            let (code, message, label) = if v.is_integer() {
                                (
                                    Code::NonPositive,
                                    format!("`{}` must be at least 1, found {shown}", p.name),
                                    "less than 1",
                                )
                            } else {
                                (
                                    Code::TypeMismatch,
                                    format!("`{}` must be a whole number, found {shown}", p.name),
                                    "not a whole number",
                                )
                            };
                            self.err(
                                Diagnostic::error(code, g.value.span, message)
                                    .label(label)
                                    .help(format!(
                                        "`{}` is a count: use a whole number of 1 or more",
                                        p.name
                                    )),
                            );
                            ok = false;
                            continue;
                        }
                        Some(v) if v.is_negative() => {
                            self.err(
                                Diagnostic::error(
                                    Code::NonPositive,
                                    g.value.span,
                                    format!(
                                        "`{}` must not be negative, found {}",
                                        p.name,
                                        Quantity { value: v, dim }
                                    ),
                                )
                                .label("negative")
                                .help(format!("give `{}` a value of zero or more", p.name)),
                            );
                            ok = false;
                            continue;
                        }
                        Some(v) => ModelParam::Quantity(Quantity { value: v, dim }),
                        None => {
                            ok = false;
                            continue;
                        }
                    }
                }
                (Some(g), None) => match &g.value.kind {
                    ExprKind::Name(n) if p.words.is_empty() || p.words.contains(&n.as_str()) => {
                        ModelParam::Word(n.clone())
                    }
                    ExprKind::Bool(b) if p.words.contains(&"true") => {
                        ModelParam::Word(b.to_string())
                    }
                    // Free text (a file name) where any word goes.
                    ExprKind::Str(t) if p.words.is_empty() => ModelParam::Word(t.clone()),
                    ExprKind::Name(n) => {
                        self.bad_word(n, g.value.span, p.words, &format!("`{}` value", p.name));
                        ok = false;
                        continue;
                    }
                    _ => {
                        self.err(
                            Diagnostic::error(
                                Code::BadValue,
                                g.value.span,
                                format!("`{}` takes a name", p.name),
                            )
                            .label("expected a word")
                            .help(if p.words.is_empty() {
                                "write a declared name".to_string()
                            } else {
                                format!("choose one of: {}", p.words.join(", "))
                            }),
                        );
                        ok = false;
                        continue;
                    }
                },
                (None, _) => match (p.default, p.dim) {
                    (Some(d), Some(dim)) => ModelParam::Quantity(parse_default(d, dim)),
                    (Some(d), None) => ModelParam::Word(d.to_string()),
                    (None, None) => continue,
                    (None, Some(_)) if p.optional => continue,
                    (None, Some(dim)) => {
                        self.missing(span, p.name, what, super::eval::example_unit(dim));
                        ok = false;
                        continue;
                    }
                },
            };
            out.insert(p.name.to_string(), v);
        }
        ok.then_some(out)
    }

    pub(crate) fn cost_model(
        &mut self,
        name: &Ident,
        kind: &Ident,
        props: &[Prop],
        span: Span,
    ) -> Option<CostModel> {
        let kinds: Vec<&str> = CostModelKind::ALL.iter().map(|k| k.0).collect();
        let Some(k) = CostModelKind::ALL
            .iter()
            .find(|k| k.0 == kind.name)
            .map(|k| k.1)
        else {
            self.bad_word(&kind.name, kind.span, &kinds, "model kind");
            return None;
        };
        let params = self.params(
            props,
            model_params(k),
            &format!("model `{}` ({})", name.name, kind.name),
            super::head(span, kind.span),
        )?;
        if k == CostModelKind::Packet && !self.packet_checks(&params, props, span) {
            return None;
        }
        if k == CostModelKind::Flow && !self.efficiency_checks(&params, props) {
            return None;
        }
        Some(CostModel {
            name: name.name.clone(),
            kind: k,
            params,
            span,
        })
    }

    /// A flow model's link efficiencies: shares of a link's bandwidth, above 0 and at most 1.
    fn efficiency_checks(&mut self, params: &BTreeMap<String, ModelParam>, props: &[Prop]) -> bool {
        let (zero, one) = (
            BigRational::from_integer(0.into()),
            BigRational::from_integer(1.into()),
        );
        let mut ok = true;
        for name in ["box_efficiency", "net_efficiency"] {
            let (Some(ModelParam::Quantity(q)), Some(p)) =
                (params.get(name), props.iter().find(|p| p.key.name == name))
            else {
                continue;
            };
            if q.value > zero && q.value <= one {
                continue;
            }
            self.err(
                Diagnostic::error(
                    Code::BadValue,
                    p.value.span,
                    format!(
                        "`{name}` is the share of a link's bandwidth a collective gets; {} is not above 0 and at most 1",
                        super::units::fmt_rational(&q.value)
                    ),
                )
                .label("not a share")
                .help(format!("write a number in (0, 1], e.g. `{name}: 0.9;`")),
            );
            ok = false;
        }
        ok
    }

    /// The packet model's cross-parameter rules (coded diagnostics at the value): a buffer
    /// that holds at least one packet, an MTU larger than the header, a background fraction of
    /// at most 1 or a whole count of hosts (not both), a background message of at least a byte.
    fn packet_checks(
        &mut self,
        params: &BTreeMap<String, ModelParam>,
        props: &[Prop],
        span: Span,
    ) -> bool {
        let get = |n: &str| match params.get(n) {
            Some(ModelParam::Quantity(q)) => Some(q.value.clone()),
            _ => None,
        };
        let at = |n: &str| {
            props
                .iter()
                .find(|p| p.key.name == n)
                .map(|p| p.value.span)
                .unwrap_or(span)
        };
        let shown = |n: &str| {
            get(n)
                .map(|v| super::units::fmt_rational(&v))
                .unwrap_or_default()
        };
        let zero = BigRational::from_integer(0.into());
        let one = BigRational::from_integer(1.into());
        let mut ok = true;
        let mut bad = |this: &mut Self, d: Diagnostic| {
            this.err(d);
            ok = false;
        };
        let (mtu, header, queue) = (get("mtu"), get("header"), get("queue"));
        if queue.as_ref() == Some(&zero) {
            bad(
                self,
                Diagnostic::error(
                    Code::NonPositive,
                    at("queue"),
                    "a switch port buffer of 0 B holds no packet",
                )
                .label("zero buffer")
                .help(
                    "give each port a buffer of at least one packet (`mtu`), e.g. `queue: 64 KiB;`",
                ),
            );
        } else if let (Some(q), Some(m)) = (&queue, &mtu)
            && q < m
        {
            bad(
                self,
                Diagnostic::error(
                    Code::BadValue,
                    at("queue"),
                    format!("a port buffer of {} B cannot hold one packet of {} B (`mtu`)", shown("queue"), shown("mtu")),
                )
                .label("smaller than one packet")
                .help("make `queue` at least `mtu`; lossless links would otherwise never send a full packet"),
            );
        }
        if let (Some(m), Some(h)) = (&mtu, &header)
            && m <= h
        {
            bad(
                self,
                Diagnostic::error(
                    Code::BadValue,
                    at("mtu"),
                    format!("an MTU of {} B leaves no payload after the {} B header", shown("mtu"), shown("header")),
                )
                .label("not larger than the header")
                .help("`mtu` counts the header: make it larger than `header`, e.g. `mtu: 1081 B;` carries 1 KiB after the default 57 B header"),
            );
        }
        for n in ["mtu", "header"] {
            if get(n).is_some_and(|v| !v.is_integer()) {
                bad(
                    self,
                    Diagnostic::error(
                        Code::BadValue,
                        at(n),
                        format!("`{n}` of {} B is not a whole number of bytes", shown(n)),
                    )
                    .label("a fraction of a byte")
                    .help(format!("give `{n}` in whole bytes")),
                );
            }
        }
        if get("background_size").is_some_and(|v| v < one) {
            bad(
                self,
                Diagnostic::error(
                    Code::NonPositive,
                    at("background_size"),
                    "background messages of less than 1 B carry nothing",
                )
                .label("too small")
                .help("give the size of each background message, e.g. `background_size: 64 KiB;`"),
            );
        }
        if get("concurrent").is_some_and(|v| !v.is_integer() || v < one) {
            bad(
                self,
                Diagnostic::error(
                    Code::BadValue,
                    at("concurrent"),
                    format!("`concurrent: {}` is not a number of instances", shown("concurrent")),
                )
                .label("a whole number, at least 1")
                .help("give how many instances of the collective run at once, each on its own hosts, e.g. `concurrent: 4;`"),
            );
        }
        if get("noise").is_some_and(|v| v > one) {
            bad(
                self,
                Diagnostic::error(
                    Code::BadValue,
                    at("noise"),
                    format!("a noise probability of {} is above 1", shown("noise")),
                )
                .label("a probability per packet, from 0 to 1")
                .help("give the chance that a host delays a packet it sends, e.g. `noise: 0.001;` for 0.1%"),
            );
        }
        if get("loss").is_some_and(|v| v >= one) {
            bad(
                self,
                Diagnostic::error(
                    Code::BadValue,
                    at("loss"),
                    format!("a loss probability of {} loses every packet", shown("loss")),
                )
                .label("a probability per packet and link, below 1")
                .help("give the chance that a Canary packet is lost on a link, e.g. `loss: 0.01;` for 1%"),
            );
        }
        if get("background").is_some_and(|v| v > one) {
            bad(
                self,
                Diagnostic::error(
                    Code::BadValue,
                    at("background"),
                    format!("background fraction {} is above 1", shown("background")),
                )
                .label("a fraction of the hosts outside the collective")
                .help("give the share of the hosts that do not take part which generate traffic, from 0 to 1 (e.g. `background: 1;` for all of them), or a count with `background_hosts: N;`"),
            );
        }
        if let Some(c) = get("background_hosts").filter(|c| *c != zero) {
            if !c.is_integer() {
                bad(
                    self,
                    Diagnostic::error(Code::TypeMismatch, at("background_hosts"), format!("`background_hosts` must be a whole number, found {}", shown("background_hosts")))
                        .label("not a whole number")
                        .help("`background_hosts` counts hosts: use a whole number, or a fraction with `background: F;`"),
                );
            }
            if props.iter().any(|p| p.key.name == "background") {
                bad(
                    self,
                    Diagnostic::error(Code::BadValue, at("background_hosts"), "both `background` and `background_hosts` say how many hosts generate traffic")
                        .label("a second answer")
                        .help("keep one: `background: F;` (a fraction of the hosts outside the collective) or `background_hosts: N;` (a count)"),
                );
            }
        }
        ok
    }

    pub(crate) fn target(&mut self, kind: &Ident, props: &[Prop], span: Span) -> Option<Target> {
        let kinds: Vec<&str> = TargetKind::ALL.iter().map(|k| k.0).collect();
        let Some(k) = TargetKind::ALL
            .iter()
            .find(|k| k.0 == kind.name)
            .map(|k| k.1)
        else {
            self.bad_word(&kind.name, kind.span, &kinds, "target");
            return None;
        };
        let options = self.params(
            props,
            target_params(k),
            &format!("target `{}`", kind.name),
            super::head(span, kind.span),
        )?;
        Some(Target {
            kind: k,
            options,
            span,
        })
    }
}
