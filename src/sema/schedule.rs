//! The `schedule` declaration: family and parameters, and the rank/factor consistency of
//! recursive-multiplying stage lists (../shared/seeds/recursive-multiplying.txt, Section 4.2).
//!
//! Stage semantics used for the checks, following Algorithms 2-6 of the paper:
//! - `aB` multiplies the current group's stage mask by B; the factors of a group must multiply to
//!   the group's size.
//! - `cTmB` collapses ranks below T in blocks of B into one rank each (T divisible by B, T at most
//!   the group size), so the group shrinks to T/B + (n - T); `eTmB` undoes the innermost
//!   unmatched collapse and must repeat its T and B. MPICH's recursive doubling for 6 ranks is
//!   `[c4m2, a2, a2, e4m2]`.
//! - `mRgGaB` sets R remainder ranks aside (the group shrinks to n - R) and acts as the first
//!   factor stage B of the rest; each remainder rank feeds one of G groups of B, so
//!   1 <= G <= (n - R) / B. `nRgGaB` is the inverse merge: the last factor stage B of the group,
//!   with the same R and G. The paper's 7-rank example is `[m1g1a3, n1g1a2]`.
//!
//! Nesting is stack-like: every collapse and merge is closed by its expand or inverse merge.

use super::elab::Elab;
use super::model::{AutoOr, CollectiveKind, Family, LeaderPolicy, Schedule, Stage};
use super::units::Dim;
use super::value::Value;
use crate::diag::{Code, Diagnostic, Span};
use crate::syntax::ast::{Expr, ExprKind, Ident, Prop};
use num_traits::Signed;

/// Schedule families and the properties each accepts.
pub const FAMILIES: &[(&str, &[&str])] = &[
    ("recursive_multiplying", &["stages", "model"]),
    ("recursive_doubling", &[]),
    ("ring", &[]),
    ("binomial", &[]),
    ("forest", &["k", "chunks"]),
    (
        "canary",
        &[
            "timeout",
            "table_size",
            "elements_per_packet",
            "shards",
            "leader",
        ],
    ),
    ("static_trees", &["trees"]),
    ("auto", &[]),
];

const LEADERS: &[(&str, LeaderPolicy)] = LeaderPolicy::ALL;

/// Collectives each family implements.
pub fn supports(family: &Family, kind: CollectiveKind) -> bool {
    use CollectiveKind::*;
    match family {
        Family::RecursiveMultiplying { .. } | Family::RecursiveDoubling => {
            matches!(kind, Allreduce | Barrier)
        }
        Family::Ring => matches!(kind, Allreduce | Allgather | ReduceScatter | Barrier),
        Family::Binomial => matches!(kind, Broadcast | Reduce),
        Family::Forest { .. } => matches!(
            kind,
            Allreduce | Allgather | ReduceScatter | Broadcast | Reduce
        ),
        Family::Canary { .. } => matches!(kind, Allreduce),
        Family::StaticTrees { .. } => matches!(kind, Allreduce | Reduce | Broadcast),
        Family::Auto => true,
    }
}

impl Elab<'_> {
    /// Decodes a schedule declaration. `ranks` is the collective's rank count, when known.
    pub(crate) fn schedule(
        &mut self,
        family: &Ident,
        props: &[Prop],
        span: Span,
        ranks: Option<usize>,
    ) -> Option<Schedule> {
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
                            super::head(span, family.span),
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
            "ring" => Family::Ring,
            "binomial" => Family::Binomial,
            "forest" => {
                let k = match p.get("k") {
                    None => AutoOr::Auto,
                    Some(k) if matches!(k.value.kind, ExprKind::Auto) => AutoOr::Auto,
                    Some(k) => {
                        AutoOr::Fixed(self.positive(&k.value, "`k` (trees per compute node)")?)
                    }
                };
                let chunks = match p.get("chunks") {
                    None => 1,
                    Some(c) => self.positive(&c.value, "`chunks`")?,
                };
                Family::Forest { k, chunks }
            }
            "canary" => {
                let timeout = match p.get("timeout") {
                    None => num_rational::BigRational::new(1.into(), 100_000.into()),
                    Some(t) => {
                        let v = self.eval_quantity(&t.value, Dim::TIME, "timeout")?;
                        if !v.is_positive() {
                            self.err(
                                Diagnostic::error(
                                    Code::NonPositive,
                                    t.value.span,
                                    "the timeout must be positive",
                                )
                                .label("not positive")
                                .help("give a time above zero, e.g. `timeout: 10 us;`"),
                            );
                            return None;
                        }
                        v
                    }
                };
                let int = |me: &mut Self, key: &str, default: u64| match p.get(key) {
                    None => Some(default),
                    Some(x) => me.positive(&x.value, &format!("`{key}`")),
                };
                let table_size = int(self, "table_size", 65_536);
                let epp = int(self, "elements_per_packet", 64);
                let shards = int(self, "shards", 1);
                let leader = match p.get("leader") {
                    None => Some(LeaderPolicy::First),
                    Some(l) => self.word(l, LEADERS, "leader policy"),
                };
                Family::Canary {
                    timeout,
                    table_size: table_size?,
                    elements_per_packet: epp?,
                    shards: shards?,
                    leader: leader?,
                }
            }
            "static_trees" => {
                let trees = match p.get("trees") {
                    None => 1,
                    Some(t) => self.positive(&t.value, "`trees`")?,
                };
                Family::StaticTrees { trees }
            }
            _ => Family::Auto,
        };
        Some(Schedule { family: fam, span })
    }

    fn positive(&mut self, e: &Expr, what: &str) -> Option<u64> {
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

/// Parses `a4`, `c8m2`, `e8m2`, `m1g1a3`, `n1g1a2`. `None` when the word is not shaped like a
/// stage at all; `Some(Err)` when it is, but a number is out of range.
pub fn decode_stage(s: &str) -> Option<Result<Stage, String>> {
    let mut chars = s.chars();
    let head = chars.next()?;
    let rest = chars.as_str();
    let nums = |parts: &[(char, &str)]| -> Option<Vec<u64>> {
        // parts: separators after the first number.
        let mut out = Vec::new();
        let mut cur = rest;
        for (i, (sep, _)) in parts.iter().enumerate() {
            let end = cur.find(|c: char| !c.is_ascii_digit()).unwrap_or(cur.len());
            if end == 0 {
                return None;
            }
            out.push(cur[..end].parse().ok()?);
            cur = &cur[end..];
            if i + 1 < parts.len() {
                cur = cur.strip_prefix(*sep)?;
            }
        }
        cur.is_empty().then_some(out)
    };
    let stage = match head {
        'a' => {
            let v = nums(&[(' ', "B")])?;
            Stage::Factor { base: v[0] }
        }
        'c' | 'e' => {
            let v = nums(&[('m', "T"), (' ', "B")])?;
            if head == 'c' {
                Stage::Collapse {
                    threshold: v[0],
                    base: v[1],
                }
            } else {
                Stage::Expand {
                    threshold: v[0],
                    base: v[1],
                }
            }
        }
        'm' | 'n' => {
            let v = nums(&[('g', "R"), ('a', "G"), (' ', "B")])?;
            if head == 'm' {
                Stage::Merge {
                    remainder: v[0],
                    groups: v[1],
                    base: v[2],
                }
            } else {
                Stage::InvMerge {
                    remainder: v[0],
                    groups: v[1],
                    base: v[2],
                }
            }
        }
        _ => return None,
    };
    let base = match stage {
        Stage::Factor { base }
        | Stage::Collapse { base, .. }
        | Stage::Expand { base, .. }
        | Stage::Merge { base, .. }
        | Stage::InvMerge { base, .. } => base,
    };
    if base < 2 {
        return Some(Err(format!(
            "`{s}`: the base must be at least 2, found {base}"
        )));
    }
    if let Stage::Merge {
        remainder, groups, ..
    }
    | Stage::InvMerge {
        remainder, groups, ..
    } = stage
    {
        if remainder == 0 || groups == 0 {
            return Some(Err(format!(
                "`{s}`: a merge needs at least one remainder rank and one group"
            )));
        }
    }
    Some(Ok(stage))
}

/// A collapse/expand or merge/inverse-merge problem at one stage of a list.
#[derive(Debug, PartialEq, Eq)]
pub struct Fault {
    /// Index of the stage at fault.
    pub at: usize,
    /// Index of the stage it should match (the open collapse or merge), with a label.
    pub partner: Option<(usize, String)>,
    pub message: String,
    pub label: String,
    pub help: String,
}

impl Fault {
    fn new(at: usize, message: String, label: impl Into<String>, help: String) -> Fault {
        Fault {
            at,
            partner: None,
            message,
            label: label.into(),
            help,
        }
    }

    fn partner(mut self, at: usize, label: impl Into<String>) -> Fault {
        self.partner = Some((at, label.into()));
        self
    }

    fn diagnostic(self, code: Code, span_of: &dyn Fn(usize) -> Span) -> Diagnostic {
        let d = Diagnostic::error(code, span_of(self.at), self.message)
            .label(self.label)
            .help(self.help);
        match self.partner {
            Some((i, label)) => d.secondary(span_of(i), label),
            None => d,
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
pub enum StageProblem {
    /// The factors of a group multiply to `product` instead of `size`. `group` is `None` for the
    /// whole list, else the indices of the stage opening the group (a collapse or merge) and of
    /// the stage closing it.
    Product {
        product: u64,
        size: u64,
        group: Option<(usize, usize)>,
    },
    Collapse(Fault),
    Merge(Fault),
}

enum Frame {
    Collapse {
        at: usize,
        threshold: u64,
        base: u64,
        outer: u64,
        outer_product: u64,
    },
    Merge {
        at: usize,
        remainder: u64,
        groups: u64,
        outer: u64,
        outer_product: u64,
    },
}

/// Where a collapse threshold comes from: the help for a bad `cTmB` in a group of `size` ranks.
fn threshold_help(size: u64, base: u64) -> String {
    let top = size / base * base;
    let range = if top >= base {
        format!("the threshold must be a multiple of {base} from {base} to {size}")
    } else {
        format!("a group of {size} ranks is too small to collapse in blocks of {base}")
    };
    let p = 1u64 << (63 - size.max(1).leading_zeros());
    if base == 2 && p != size && size > 2 {
        let t = 2 * (size - p);
        format!(
            "{range}; to reach a power of two as MPICH does for {size} ranks, use `c{t}m2` (and `e{t}m2`)"
        )
    } else {
        range
    }
}

/// A two-stage merge list `[mRgGaX, nRgGaY]` whose group of `inner` ranks fits, if there is one.
fn merge_example(inner: u64, remainder: u64, groups: u64) -> Option<String> {
    let d = (2..inner).find(|d| inner % d == 0 && groups <= inner / d)?;
    Some(format!(
        "[m{remainder}g{groups}a{d}, n{remainder}g{groups}a{}]",
        inner / d
    ))
}

/// Finds the first inconsistency of a stage list with `n` ranks, if any.
pub fn stage_problem(stages: &[Stage], n: u64) -> Option<StageProblem> {
    use StageProblem::{Collapse, Merge};
    let mut size = n;
    let mut product: u64 = 1;
    let mut stack: Vec<Frame> = Vec::new();
    for (i, st) in stages.iter().enumerate() {
        match *st {
            Stage::Factor { base } => product = product.saturating_mul(base),
            Stage::Collapse { threshold, base } => {
                if threshold % base != 0 {
                    return Some(Collapse(Fault::new(
                        i,
                        format!(
                            "collapse `{st}`: the threshold {threshold} is not divisible by the base {base}"
                        ),
                        format!("{threshold} is not a multiple of {base}"),
                        threshold_help(size, base),
                    )));
                }
                if threshold > size || threshold == 0 {
                    return Some(Collapse(Fault::new(
                        i,
                        format!(
                            "collapse `{st}`: the threshold {threshold} does not fit a group of {size} ranks"
                        ),
                        if threshold == 0 {
                            "the threshold is 0".to_string()
                        } else {
                            format!("{threshold} is more than {size}")
                        },
                        threshold_help(size, base),
                    )));
                }
                if product != 1 {
                    return Some(Collapse(Fault::new(
                        i,
                        format!("collapse `{st}` comes after factor stages of the same group"),
                        "a collapse must start its group",
                        "collapse first, then the factor stages of the smaller group, then expand, e.g. `[c4m2, a2, a2, e4m2]` for 6 ranks".into(),
                    )));
                }
                stack.push(Frame::Collapse {
                    at: i,
                    threshold,
                    base,
                    outer: size,
                    outer_product: product,
                });
                size = threshold / base + (size - threshold);
                product = 1;
            }
            Stage::Expand { threshold, base } => match stack.pop() {
                Some(Frame::Collapse {
                    at,
                    threshold: t,
                    base: b,
                    outer,
                    outer_product,
                }) if t == threshold && b == base => {
                    if product != size {
                        return Some(StageProblem::Product {
                            product,
                            size,
                            group: Some((at, i)),
                        });
                    }
                    size = outer;
                    product = outer_product.saturating_mul(size);
                }
                Some(Frame::Collapse {
                    at,
                    threshold: t,
                    base: b,
                    ..
                }) => {
                    return Some(Collapse(
                        Fault::new(
                            i,
                            format!("expand `{st}` does not match the collapse `c{t}m{b}`"),
                            format!("does not undo `c{t}m{b}`"),
                            format!(
                                "an expand repeats the threshold and base of its collapse: write `e{t}m{b}`"
                            ),
                        )
                        .partner(at, "the collapse it closes"),
                    ));
                }
                Some(Frame::Merge {
                    at,
                    remainder,
                    groups,
                    ..
                }) => {
                    return Some(Merge(
                        Fault::new(
                            i,
                            format!(
                                "expand `{st}` comes before the merge `{}` is closed",
                                stages[at]
                            ),
                            "the merge is still open",
                            format!(
                                "close the merge with `n{remainder}g{groups}a<B>` first; groups nest like brackets"
                            ),
                        )
                        .partner(at, "merge opened here"),
                    ));
                }
                None => {
                    return Some(Collapse(Fault::new(
                        i,
                        format!("expand `{st}` has no collapse to undo"),
                        "nothing to expand",
                        format!(
                            "put `c{threshold}m{base}` before the stages it collapses, or remove `{st}`"
                        ),
                    )));
                }
            },
            Stage::Merge {
                remainder,
                groups,
                base,
            } => {
                if product != 1 {
                    return Some(Merge(Fault::new(
                        i,
                        format!("merge `{st}` must be the first stage of its group"),
                        "comes after factor stages",
                        "put the merge first and its inverse merge last, e.g. `[m1g1a3, n1g1a2]` for 7 ranks".into(),
                    )));
                }
                if remainder >= size {
                    return Some(Merge(Fault::new(
                        i,
                        format!(
                            "merge `{st}`: setting {remainder} ranks aside leaves none of the {size} to merge into"
                        ),
                        format!("{remainder} of {size} ranks"),
                        format!("set fewer than {size} ranks aside; usually 1, e.g. `m1g1a{base}`"),
                    )));
                }
                let inner = size - remainder;
                if inner % base != 0 {
                    let divisors: Vec<String> = (2..=inner)
                        .filter(|d| inner % d == 0)
                        .take(3)
                        .map(|d| format!("`m{remainder}g{groups}a{d}`"))
                        .collect();
                    return Some(Merge(Fault::new(
                        i,
                        format!(
                            "merge `{st}`: the {inner} ranks left after setting {remainder} aside do not split into groups of {base}"
                        ),
                        format!("{base} does not divide {inner}"),
                        if divisors.is_empty() {
                            format!("the base must divide {inner}")
                        } else {
                            format!("the base must divide {inner}, e.g. {}", divisors.join(", "))
                        },
                    )));
                }
                if groups > inner / base {
                    let most = inner / base;
                    return Some(Merge(Fault::new(
                        i,
                        format!(
                            "merge `{st}`: the {inner} ranks left after setting {remainder} aside form {most} group{} of {base}, not {groups}",
                            if most == 1 { "" } else { "s" }
                        ),
                        format!("more than {most} group{}", if most == 1 { "" } else { "s" }),
                        format!(
                            "use at most {most} group{}: `m{remainder}g{most}a{base}`, and the same in the inverse merge",
                            if most == 1 { "" } else { "s" }
                        ),
                    )));
                }
                stack.push(Frame::Merge {
                    at: i,
                    remainder,
                    groups,
                    outer: size,
                    outer_product: product,
                });
                size = inner;
                product = base;
            }
            Stage::InvMerge {
                remainder,
                groups,
                base,
            } => match stack.pop() {
                Some(Frame::Merge {
                    at,
                    remainder: r,
                    groups: g,
                    outer,
                    outer_product,
                }) if r == remainder && g == groups => {
                    product = product.saturating_mul(base);
                    if product != size {
                        return Some(StageProblem::Product {
                            product,
                            size,
                            group: Some((at, i)),
                        });
                    }
                    size = outer;
                    product = outer_product.saturating_mul(size);
                }
                Some(Frame::Merge {
                    at,
                    remainder: r,
                    groups: g,
                    ..
                }) => {
                    let need = if product > 0 && size % product == 0 && size / product >= 2 {
                        (size / product).to_string()
                    } else {
                        "<B>".to_string()
                    };
                    return Some(Merge(
                        Fault::new(
                            i,
                            format!(
                                "inverse merge `{st}` does not match the merge `{}`",
                                stages[at]
                            ),
                            format!("`n{remainder}g{groups}` does not repeat `m{r}g{g}`"),
                            format!(
                                "an inverse merge repeats the remainder and groups of its merge: write `n{r}g{g}a{need}`"
                            ),
                        )
                        .partner(at, "the merge it closes"),
                    ));
                }
                Some(Frame::Collapse {
                    at,
                    threshold,
                    base: b,
                    ..
                }) => {
                    return Some(Collapse(
                        Fault::new(
                            i,
                            format!(
                                "inverse merge `{st}` comes before the collapse `c{threshold}m{b}` is expanded"
                            ),
                            "the collapse is still open",
                            format!("expand with `e{threshold}m{b}` first; groups nest like brackets"),
                        )
                        .partner(at, "collapse opened here"),
                    ));
                }
                None => {
                    return Some(Merge(Fault::new(
                        i,
                        format!("inverse merge `{st}` has no merge to undo"),
                        "nothing to undo",
                        format!(
                            "start its group with a merge `m{remainder}g{groups}a<B>`, or remove `{st}`"
                        ),
                    )));
                }
            },
        }
    }
    if let Some(f) = stack.pop() {
        return Some(match f {
            Frame::Collapse {
                at,
                threshold,
                base,
                ..
            } => Collapse(Fault::new(
                at,
                format!("collapse `c{threshold}m{base}` is never expanded"),
                "not closed",
                format!("add `e{threshold}m{base}` after the stages of the collapsed group"),
            )),
            Frame::Merge {
                at,
                remainder,
                groups,
                ..
            } => {
                let help = if product > 0 && size % product == 0 && size / product >= 2 {
                    format!(
                        "end its group with `n{remainder}g{groups}a{}`",
                        size / product
                    )
                } else {
                    format!(
                        "end its group with an inverse merge `n{remainder}g{groups}aB`; the merge's base, the factors between and B must multiply to {size}"
                    )
                };
                Merge(Fault::new(
                    at,
                    format!("merge `{}` has no inverse merge", stages[at]),
                    "not closed",
                    help,
                ))
            }
        });
    }
    if product != size {
        return Some(StageProblem::Product {
            product,
            size,
            group: None,
        });
    }
    None
}

/// A few stage lists that fit `n` ranks: factorisations with few stages, MPICH's
/// collapse/expand around a power of two, and a merge for primes. Every one passes
/// [`stage_problem`] for `n`.
pub fn suggestions(n: u64) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if n <= 1 {
        return vec!["`[]` (a single rank needs no stages)".into()];
    }
    out.push(format!("[a{n}]"));
    // Two-factor splits, most balanced first.
    let mut d = n.isqrt();
    while d >= 2 {
        if n % d == 0 {
            out.push(format!("[a{d}, a{}]", n / d));
            break;
        }
        d -= 1;
    }
    // Power-of-two recursive doubling, with MPICH's collapse/expand when n is not a power of two.
    let p = 1u64 << (63 - n.leading_zeros());
    let doubling: Vec<String> = (0..p.trailing_zeros()).map(|_| "a2".to_string()).collect();
    if p == n {
        out.push(format!("[{}]", doubling.join(", ")));
    } else {
        let t = 2 * (n - p);
        out.push(format!("[c{t}m2, {}, e{t}m2]", doubling.join(", ")));
    }
    if out.len() < 3 && n >= 5 {
        // Merge one remainder rank into a factorisable n - 1.
        let inner = n - 1;
        let mut d = inner.isqrt();
        while d >= 2 {
            if inner % d == 0 {
                out.push(format!("[m1g1a{d}, n1g1a{}]", inner / d));
                break;
            }
            d -= 1;
        }
    }
    let mut seen = Vec::new();
    out.retain(|s| {
        let new = !seen.contains(s);
        seen.push(s.clone());
        new
    });
    out.truncate(4);
    out.iter().map(|s| format!("`{s}`")).collect()
}

impl Value {
    /// True for the value `auto`.
    pub fn is_auto(&self) -> bool {
        matches!(self, Value::Auto)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(s: &str) -> Vec<Stage> {
        s.split(',')
            .map(|x| decode_stage(x.trim()).unwrap().unwrap())
            .collect()
    }

    #[test]
    fn paper_examples_fit() {
        assert_eq!(stage_problem(&list("a3, a4"), 12), None);
        assert_eq!(stage_problem(&list("c4m2, a2, a2, e4m2"), 6), None);
        assert_eq!(stage_problem(&list("m1g1a3, n1g1a2"), 7), None);
        assert_eq!(stage_problem(&list("a8, a3, a4"), 96), None);
    }

    #[test]
    fn product_mismatch_names_product() {
        assert_eq!(
            stage_problem(&list("a3, a4"), 10),
            Some(StageProblem::Product {
                product: 12,
                size: 10,
                group: None
            })
        );
        let s = suggestions(10);
        assert!(s.contains(&"`[a2, a5]`".to_string()), "{s:?}");
    }

    #[test]
    fn product_inside_a_group_names_the_group() {
        assert_eq!(
            stage_problem(&list("c4m2, a2, a4, e4m2"), 6),
            Some(StageProblem::Product {
                product: 8,
                size: 4,
                group: Some((0, 3))
            })
        );
        assert_eq!(
            stage_problem(&list("m1g1a3, n1g1a3"), 7),
            Some(StageProblem::Product {
                product: 9,
                size: 6,
                group: Some((0, 1))
            })
        );
    }

    /// Every suggested stage list fits its rank count, and none is offered twice.
    #[test]
    fn suggestions_fit() {
        for n in 2..=64u64 {
            let sugg = suggestions(n);
            assert!(!sugg.is_empty(), "no suggestion for {n}");
            for (i, sug) in sugg.iter().enumerate() {
                assert!(!sugg[..i].contains(sug), "{sug} twice for {n}: {sugg:?}");
                let inner = sug.trim_matches('`').trim_matches(['[', ']']);
                assert_eq!(stage_problem(&list(inner), n), None, "{sug} for {n}");
            }
        }
    }

    /// The examples in help lines are valid too.
    #[test]
    fn help_examples_fit() {
        for n in 3..=64u64 {
            let p = 1u64 << (63 - n.leading_zeros());
            if p != n {
                let t = 2 * (n - p);
                let doubling = vec!["a2"; p.trailing_zeros() as usize].join(", ");
                let l = format!("c{t}m2, {doubling}, e{t}m2");
                assert_eq!(stage_problem(&list(&l), n), None, "{l} for {n}");
            }
            for g in 1..=3 {
                if let Some(e) = merge_example(n - 1, 1, g) {
                    let l = e.trim_matches(['[', ']']);
                    assert_eq!(stage_problem(&list(l), n), None, "{l} for {n}");
                }
            }
        }
    }

    #[test]
    fn collapse_threshold_must_divide() {
        assert!(matches!(
            stage_problem(&list("c5m2, a4, e5m2"), 6),
            Some(StageProblem::Collapse(Fault { at: 0, .. }))
        ));
    }

    #[test]
    fn faults_point_at_their_stage() {
        let at = |l: &str, n: u64| match stage_problem(&list(l), n) {
            Some(StageProblem::Collapse(f) | StageProblem::Merge(f)) => {
                (f.at, f.partner.map(|p| p.0))
            }
            other => panic!("{l} on {n}: {other:?}"),
        };
        assert_eq!(at("c4m2, a2, a2, e6m2", 6), (3, Some(0)));
        assert_eq!(at("c4m2, a2, a2", 6), (0, None));
        assert_eq!(at("a2, e4m2", 6), (1, None));
        assert_eq!(at("a2, c4m2, a2, e4m2", 6), (1, None));
        assert_eq!(at("c8m2, a2, a2, e8m2", 6), (0, None));
        assert_eq!(at("m1g1a4, n1g1a2", 7), (0, None));
        assert_eq!(at("m1g3a3, n1g3a2", 7), (0, None));
        assert_eq!(at("m1g1a3, n1g2a2", 7), (1, Some(0)));
        assert_eq!(at("m1g1a3, e4m2", 7), (1, Some(0)));
        assert_eq!(at("c4m2, a2, n1g1a2", 6), (2, Some(0)));
        assert_eq!(at("m1g1a3", 7), (0, None));
    }

    #[test]
    fn decode_rejects_garbage() {
        assert!(decode_stage("x3").is_none());
        assert!(decode_stage("a").is_none());
        assert!(decode_stage("a1").unwrap().is_err());
        assert!(decode_stage("c8m").is_none());
    }
}
