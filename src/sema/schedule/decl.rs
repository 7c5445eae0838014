//! Elaboration of a `schedule` declaration: the family word, its properties (stages, model,
//! trees) and the diagnostics for each; `canary`'s parameters are in [`super::canary`].

use super::FAMILIES;
use super::check::{merge_example, stage_problem};
use super::decode::{decode_stage, suggestions};
use super::fault::StageProblem;
use crate::diag::{Code, Diagnostic, Span};
use crate::sema::elab::Elab;
use crate::sema::model::{AutoOr, Family, Schedule, Stage, TreeRoots};
use crate::syntax::ast::{Expr, ExprKind, Ident, Prop};

impl Elab<'_> {
    /// Decodes a schedule declaration. `ranks` is the collective's rank count, when known.
    pub(crate) fn schedule(
        &mut self,
        family: &Ident,
        props: &[Prop],
        span: Span,
        coll: Option<&crate::sema::model::Collective>,
        topo: Option<&crate::sema::model::Topology>,
        models: &[crate::sema::model::CostModel],
    ) -> Option<Schedule> {
        let ranks = coll.map(|c| c.ranks.len());
        let Some((_, allowed)) = FAMILIES.iter().find(|f| f.0 == family.name) else {
            let names: Vec<&str> = FAMILIES.iter().map(|f| f.0).collect();
            self.bad_word(&family.name, family.span, &names, "schedule family");
            return None;
        };
        let what = format!("schedule `{}`", family.name);
        let p = self.props(props, allowed, &what);
        let fam = match family.name.as_str() {
            "recursive_multiplying" => {
                let stages = match p.get("stages") {
                    None => {
                        // An example that fits the ranks: the two-factor split if there is one.
                        let example = ranks
                            .map(|n| suggestions(n as u64))
                            .and_then(|s| s.get(1).or(s.first()).cloned())
                            .map(|s| s.trim_matches('`').to_string())
                            .unwrap_or_else(|| "[a2, a4]".into());
                        self.missing(
                            crate::sema::head(span, family.span),
                            "stages",
                            &what,
                            &format!("{example};` or `stages: auto"),
                        );
                        return None;
                    }
                    Some(s) if matches!(s.value.kind, ExprKind::Auto) => AutoOr::Auto,
                    Some(s) => {
                        let items = self.stages(&s.value)?;
                        let stages: Vec<Stage> = items.iter().map(|x| x.0).collect();
                        if let Some(n) = ranks {
                            let spans: Vec<Span> = items.iter().map(|x| x.1).collect();
                            self.check_stages(&stages, &spans, n, s.value.span)?;
                        }
                        AutoOr::Fixed(stages)
                    }
                };
                let model = match p.get("model") {
                    Some(m) => match &m.value.kind {
                        ExprKind::Name(n) => Some(n.clone()),
                        _ => {
                            self.err(
                                Diagnostic::error(Code::TypeMismatch, m.value.span, "`model` must name a declared cost model")
                                    .label("expected a model name")
                                    .help("declare one with `model m: pipelining_postal { ... }` and write `model: m;`"),
                            );
                            return None;
                        }
                    },
                    None => None,
                };
                Family::RecursiveMultiplying { stages, model }
            }
            "recursive_doubling" => Family::RecursiveDoubling,
            "ring" => {
                let slices = match p.get("slices") {
                    None => AutoOr::Auto,
                    Some(c) if matches!(c.value.kind, ExprKind::Auto) => AutoOr::Auto,
                    Some(c) => AutoOr::Fixed(self.ring_slices(&c.value, coll)?),
                };
                let channels = match p.get("channels") {
                    None => AutoOr::Fixed(1),
                    Some(c) if matches!(c.value.kind, ExprKind::Auto) => AutoOr::Auto,
                    Some(c) => AutoOr::Fixed(self.ring_channels(&c.value)?),
                };
                Family::Ring { slices, channels }
            }
            "binomial" => Family::Binomial,
            "pairwise" => {
                let concurrent = match p.get("concurrent") {
                    None => false,
                    Some(c) => self.eval_bool(&c.value)?,
                };
                Family::Pairwise { concurrent }
            }
            "bruck" => {
                let radix = match p.get("radix") {
                    None => 2,
                    Some(r) => {
                        let v = self.positive(&r.value, "`radix`")?;
                        if v < 2 {
                            self.err(
                                Diagnostic::error(
                                    Code::NonPositive,
                                    r.value.span,
                                    "Bruck's radix must be at least 2, found 1",
                                )
                                .label("a radix of 1 makes no progress")
                                .help("use `radix: 2;` (log2 N rounds) or more"),
                            );
                            return None;
                        }
                        v
                    }
                };
                Family::Bruck { radix }
            }
            "hierarchical" => Family::Hierarchical,
            "mcf" => {
                let chunks = match p.get("chunks") {
                    None => AutoOr::Auto,
                    Some(c) if matches!(c.value.kind, ExprKind::Auto) => AutoOr::Auto,
                    Some(c) => AutoOr::Fixed(self.positive(&c.value, "`chunks`")?),
                };
                Family::Mcf { chunks }
            }
            "nccl_tree" => {
                let chunks = match p.get("chunks") {
                    None => AutoOr::Auto,
                    Some(c) if matches!(c.value.kind, ExprKind::Auto) => AutoOr::Auto,
                    Some(c) => AutoOr::Fixed(self.positive(&c.value, "`chunks`")?),
                };
                Family::NcclTree { chunks }
            }
            "forest" => {
                let k = match p.get("k") {
                    None => AutoOr::Auto,
                    Some(k) if matches!(k.value.kind, ExprKind::Auto) => AutoOr::Auto,
                    Some(k) => {
                        AutoOr::Fixed(self.positive(&k.value, "`k` (trees per compute node)")?)
                    }
                };
                let chunks = match p.get("chunks") {
                    None => AutoOr::Auto,
                    Some(c) if matches!(c.value.kind, ExprKind::Auto) => AutoOr::Auto,
                    Some(c) => AutoOr::Fixed(self.positive(&c.value, "`chunks`")?),
                };
                Family::Forest { k, chunks }
            }
            "canary" => {
                self.canary(&p, crate::sema::head(span, family.span), coll, topo, models)?
            }
            "static_trees" => {
                let trees = match p.get("trees") {
                    None => None,
                    Some(t) => Some((self.positive(&t.value, "`trees`")?, t.value.span)),
                };
                let seed = match p.get("seed") {
                    None => 0,
                    Some(x) => {
                        let v = self.eval_int(&x.value)?;
                        match u64::try_from(v) {
                            Ok(v) => v,
                            Err(_) => {
                                self.err(
                                    Diagnostic::error(
                                        Code::NonPositive,
                                        x.value.span,
                                        format!("the seed must not be negative, found {v}"),
                                    )
                                    .label("negative")
                                    .help("use a whole number of 0 or more, e.g. `seed: 1;`"),
                                );
                                return None;
                            }
                        }
                    }
                };
                let roots = match p.get("roots") {
                    None => TreeRoots::Random { seed },
                    Some(r) if matches!(&r.value.kind, ExprKind::Name(n) if n == "random") => {
                        TreeRoots::Random { seed }
                    }
                    Some(r) => TreeRoots::Named(self.root_switches(&r.value, topo?)?),
                };
                match (&roots, trees) {
                    (TreeRoots::Named(names), Some((t, at))) if names.len() as u64 != t => {
                        self.err(
                            Diagnostic::error(
                                Code::BadValue,
                                at,
                                format!("{t} trees, but `roots` names {} switches", names.len()),
                            )
                            .label("one root per tree")
                            .help("name one switch per tree in `roots`, or drop `trees` (it is then the number of roots)"),
                        );
                        return None;
                    }
                    _ => {}
                }
                let trees = match (&roots, trees) {
                    (TreeRoots::Named(names), _) => names.len() as u64,
                    (_, t) => t.map_or(1, |x| x.0),
                };
                let slots = match p.get("slots") {
                    None => crate::sema::model::DEFAULT_SLOTS,
                    Some(x) => self.slots(&x.value)?,
                };
                Family::StaticTrees {
                    trees,
                    roots,
                    slots,
                }
            }
            _ => Family::Auto,
        };
        let props = props.iter().map(|x| (x.key.name.clone(), x.span)).collect();
        Some(Schedule {
            family: fam,
            span,
            props,
        })
    }

    /// `roots: [spine[0], spine[1]]`: distinct switches, by name.
    pub(super) fn root_switches(
        &mut self,
        e: &Expr,
        topo: &crate::sema::model::Topology,
    ) -> Option<Vec<String>> {
        let items: Vec<&Expr> = match &e.kind {
            ExprKind::List(items) => items.iter().collect(),
            _ => vec![e],
        };
        let mut names: Vec<String> = Vec::new();
        for it in items {
            let ids = match self.eval(it) {
                Some(crate::sema::value::Value::Nodes(ids)) => ids,
                Some(other) => {
                    self.err(
                        Diagnostic::error(
                            Code::TypeMismatch,
                            it.span,
                            format!("a tree root must be a switch, found {}", other.type_name()),
                        )
                        .label("not a node")
                        .help("write `roots: random;` or a list of switches such as `[spine[0], spine[1]]`"),
                    );
                    return None;
                }
                None => return None,
            };
            for id in ids {
                let node = topo.nodes.get(id)?;
                if node.kind != crate::sema::model::NodeKind::Switch {
                    self.err(
                        Diagnostic::error(
                            Code::BadValue,
                            it.span,
                            format!("`{}` is a compute node, not a switch", node.name),
                        )
                        .label("trees are rooted at switches")
                        .secondary(node.span, "declared as a compute node here")
                        .help("name switches as roots, or write `roots: random;`"),
                    );
                    return None;
                }
                if names.contains(&node.name) {
                    self.err(
                        Diagnostic::error(
                            Code::BadValue,
                            it.span,
                            format!("`{}` roots two trees", node.name),
                        )
                        .label("named again")
                        .help("each tree needs its own root switch"),
                    );
                    return None;
                }
                names.push(node.name.clone());
            }
        }
        Some(names)
    }

    /// A ring's fixed `slices`: at least 1, for an allreduce only (the other rings send whole
    /// parts), and no more than the elements of one step's chunk.
    fn ring_slices(
        &mut self,
        e: &Expr,
        coll: Option<&crate::sema::model::Collective>,
    ) -> Option<u64> {
        let s = self.positive(e, "`slices`")?;
        let Some(c) = coll else {
            return Some(s);
        };
        if s > 1 && c.kind != crate::sema::model::CollectiveKind::Allreduce {
            self.err(
                Diagnostic::error(
                    Code::BadValue,
                    e.span,
                    format!(
                        "a ring {} sends whole parts; `slices` cuts allreduce steps",
                        c.kind.name()
                    ),
                )
                .label("slices for a collective that is not an allreduce")
                .help("remove `slices`, or write `slices: 1;`"),
            );
            return None;
        }
        let chunk = c.count / (c.ranks.len() as u64).max(1);
        if s > chunk.max(1) {
            self.err(
                Diagnostic::error(
                    Code::BadValue,
                    e.span,
                    format!(
                        "{s} slices of a step's chunk of {chunk} element(s) would leave slices empty"
                    ),
                )
                .label("more slices than elements per chunk")
                .help(format!(
                    "use at most {} slices, or `slices: auto;`",
                    chunk.max(1)
                )),
            );
            return None;
        }
        Some(s)
    }

    /// A ring's fixed `channels`: one ring per channel, at most the executor's 32.
    fn ring_channels(&mut self, e: &Expr) -> Option<u64> {
        let k = self.positive(e, "`channels`")?;
        let most = crate::net::rings::MAX_CHANNELS as u64;
        if k > most {
            self.err(
                Diagnostic::error(
                    Code::BadValue,
                    e.span,
                    format!("{k} channels are more than NCCL and the MSCCL executor run ({most})"),
                )
                .label("too many channels")
                .help(format!("use at most {most} channels, or `channels: auto;`")),
            );
            return None;
        }
        Some(k)
    }

    /// Static trees' `slots`: a power of two, as a switch finds a block's slot by masking its
    /// sequence number.
    fn slots(&mut self, e: &Expr) -> Option<u64> {
        let n = self.positive(e, "`slots`")?;
        if !n.is_power_of_two() || n > 1 << 20 {
            let below = 1u64 << (63 - n.leading_zeros()).min(20);
            self.err(
                Diagnostic::error(
                    Code::BadValue,
                    e.span,
                    format!("`slots` must be a power of two of at most 2^20, found {n}"),
                )
                .label("not a power of two up to 1048576")
                .help(format!("a switch finds a block's slot by masking its sequence number; use `slots: {below};`")),
            );
            return None;
        }
        Some(n)
    }

    pub(super) fn positive(&mut self, e: &Expr, what: &str) -> Option<u64> {
        let v = self.eval_int(e)?;
        if v <= 0 {
            self.err(
                Diagnostic::error(
                    Code::NonPositive,
                    e.span,
                    format!("{what} must be at least 1, found {v}"),
                )
                .label("less than 1")
                .help("use a whole number of 1 or more"),
            );
            return None;
        }
        Some(v as u64)
    }

    /// Decodes a stage list, each stage with its span.
    fn stages(&mut self, e: &Expr) -> Option<Vec<(Stage, Span)>> {
        let ExprKind::List(items) = &e.kind else {
            let found = self
                .eval(e)
                .map(|v| v.type_name())
                .unwrap_or_else(|| "something else".into());
            self.err(
                Diagnostic::error(
                    Code::TypeMismatch,
                    e.span,
                    format!("`stages` must be a list of stages or `auto`, found {found}"),
                )
                .label("expected `[...]`")
                .help("write stages in the paper's encoding, e.g. `stages: [a3, a4];`"),
            );
            return None;
        };
        let mut out = Vec::new();
        let mut ok = true;
        for it in items {
            let text = match &it.kind {
                ExprKind::Name(n) => Some(n.as_str()),
                _ => None,
            };
            match text.and_then(decode_stage) {
                Some(Ok(s)) => out.push((s, it.span)),
                Some(Err(msg)) => {
                    self.err(
                        Diagnostic::error(Code::BadStage, it.span, msg)
                            .label("invalid stage")
                            .help("stages are `aB`, `cTmB`, `eTmB`, `mRgGaB`, `nRgGaB` with whole numbers, e.g. `a4`, `c8m2`, `m1g1a3`"),
                    );
                    ok = false;
                }
                None => {
                    let shown = match &it.kind {
                        ExprKind::Name(n) => format!("`{n}`"),
                        ExprKind::Number(_) => "a bare number".into(),
                        _ => "this".into(),
                    };
                    let encoding = "stages are `aB` (factor), `cTmB`/`eTmB` (collapse/expand), `mRgGaB`/`nRgGaB` (merge/inverse merge); e.g. `a4`";
                    let help = match &it.kind {
                        ExprKind::Number(v) if v.is_integer() => {
                            format!("a factor stage of {v} is written `a{v}`; {encoding}")
                        }
                        _ => encoding.to_string(),
                    };
                    self.err(
                        Diagnostic::error(
                            Code::BadStage,
                            it.span,
                            format!("{shown} is not a stage"),
                        )
                        .label("not in the stage encoding")
                        .help(help),
                    );
                    ok = false;
                }
            }
        }
        ok.then_some(out)
    }

    /// Checks a stage list against the rank count. `spans` are the stages' own spans, `span` the
    /// list's.
    pub(crate) fn check_stages(
        &mut self,
        stages: &[Stage],
        spans: &[Span],
        n: usize,
        span: Span,
    ) -> Option<()> {
        let Some(p) = stage_problem(stages, n as u64) else {
            return Some(());
        };
        let at = |i: usize| spans.get(i).copied().unwrap_or(span);
        let shown = |r: std::ops::RangeInclusive<usize>| -> String {
            stages
                .get(r)
                .unwrap_or_default()
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let d = match p {
            StageProblem::Product {
                product,
                size,
                group: None,
            } => {
                let d = Diagnostic::error(
                    Code::StageProduct,
                    span,
                    format!("the stage factors multiply to {product}, but there are {size} ranks"),
                )
                .label(format!(
                    "[{}] multiplies to {product}, not {size}",
                    shown(0..=stages.len().saturating_sub(1))
                ))
                .help(format!(
                    "stage lists that fit {size} ranks: {}",
                    suggestions(size).join(", ")
                ));
                if stages.iter().any(|s| !matches!(s, Stage::Factor { .. })) {
                    d.note("a collapse ... expand or merge ... inverse merge group counts as one factor: the number of ranks it starts with")
                } else {
                    d
                }
            }
            StageProblem::Product {
                product,
                size,
                group: Some((open, close)),
            } => {
                let (what, fit) = match stages[open] {
                    Stage::Merge {
                        remainder, groups, ..
                    } => (
                        format!(
                            "{size} ranks remain after the merge `{}` sets {remainder} aside",
                            stages[open]
                        ),
                        match merge_example(size, remainder, groups) {
                            Some(e) => format!(
                                "the merge's base, the factors between and the inverse merge's base must multiply to {size}, e.g. `{e}`"
                            ),
                            None => format!(
                                "the merge's base, the factors between and the inverse merge's base must multiply to {size}"
                            ),
                        },
                    ),
                    _ => (
                        format!("the collapse `{}` leaves {size} ranks", stages[open]),
                        format!(
                            "between `{}` and `{}`, use stages that fit {size} ranks: {}",
                            stages[open],
                            stages[close],
                            suggestions(size).join(", ")
                        ),
                    ),
                };
                let label = if matches!(stages[open], Stage::Merge { .. }) {
                    format!(
                        "`{}` multiply to {product}, not {size}",
                        shown(open..=close)
                    )
                } else if close > open + 1 {
                    format!(
                        "`{}` multiply to {product}, not {size}",
                        shown(open + 1..=close - 1)
                    )
                } else {
                    format!("no factor stages: the product is 1, not {size}")
                };
                Diagnostic::error(
                    Code::StageProduct,
                    at(open).to(at(close)),
                    format!("the stage factors of a group multiply to {product}, but {what}"),
                )
                .label(label)
                .help(fit)
            }
            StageProblem::Collapse(f) => f.diagnostic(Code::CollapseExpand, &at),
            StageProblem::Merge(f) => f.diagnostic(Code::MergeMismatch, &at),
        };
        self.err(d);
        None
    }
}
