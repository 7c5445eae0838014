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
const PACKET: &[P] = &[
    q("queue", Dim::SIZE, Some("1 MiB")),
    q("mtu", Dim::SIZE, Some("4096 B")),
    w(
        "routing",
        &["adaptive", "ecmp", "minimal"],
        Some("adaptive"),
    ),
    q("background", Dim::NONE, Some("0")),
];
const FLOW: &[P] = &[
    q("overhead", T, Some("1 us")),
    q("gamma", IB, Some("0 ns/B")),
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
        TargetKind::Mpi | TargetKind::P4 | TargetKind::Goal => &[],
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
        if let Some(ModelParam::Quantity(q)) = params.get("background") {
            if q.value >= BigRational::from_integer(1.into()) {
                let at = props
                    .iter()
                    .find(|p| p.key.name == "background")
                    .map(|p| p.value.span)
                    .unwrap_or(span);
                self.err(
                    Diagnostic::error(Code::BadValue, at, format!("background load {} is not below 1", super::units::fmt_rational(&q.value)))
                        .label("a fraction of link capacity")
                        .help("give the share of each link's bandwidth used by background traffic, from 0 up to (not including) 1, e.g. `background: 0.5;`"),
                );
                return None;
            }
        }
        Some(CostModel {
            name: name.name.clone(),
            kind: k,
            params,
            span,
        })
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
