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
                        self.missing(span, "stages", &what, "[a2, a4]` or `stages: auto");
                        return None;
                    }
                    Some(s) if matches!(s.value.kind, ExprKind::Auto) => AutoOr::Auto,
                    Some(s) => {
                        let stages = self.stages(&s.value)?;
                        if let Some(n) = ranks {
                            self.check_stages(&stages, n, s.value.span)?;
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
                        AutoOr::Fixed(self.positive(&k.value, "k (trees per compute node)")?)
                    }
                };
                let chunks = match p.get("chunks") {
                    None => 1,
                    Some(c) => self.positive(&c.value, "chunks")?,
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
                    Some(x) => me.positive(&x.value, key),
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
                    Some(t) => self.positive(&t.value, "trees")?,
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
                .label("not positive")
                .help(format!("give {what} a value of 1 or more")),
            );
            return None;
        }
        Some(v as u64)
    }

    fn stages(&mut self, e: &Expr) -> Option<Vec<Stage>> {
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
                Some(Ok(s)) => out.push(s),
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
                    self.err(
                        Diagnostic::error(Code::BadStage, it.span, format!("{shown} is not a stage"))
                            .label("not in the stage encoding")
                            .help("stages are `aB` (factor), `cTmB`/`eTmB` (collapse/expand), `mRgGaB`/`nRgGaB` (merge/inverse merge); e.g. `a4`"),
                    );
                    ok = false;
                }
            }
        }
        ok.then_some(out)
    }

    /// Checks a stage list against the rank count, reporting every problem it can.
    pub(crate) fn check_stages(&mut self, stages: &[Stage], n: usize, span: Span) -> Option<()> {
        match stage_problem(stages, n as u64) {
            None => Some(()),
            Some(p) => {
                let d = match p {
                    StageProblem::Product {
                        product,
                        size,
                        outer,
                    } => {
                        let list: Vec<String> = stages.iter().map(|s| s.to_string()).collect();
                        let sugg = suggestions(size);
                        let where_ = if outer {
                            format!("there are {size} ranks")
                        } else {
                            format!("the collapsed or merged group has {size} ranks")
                        };
                        Diagnostic::error(
                            Code::StageProduct,
                            span,
                            format!("the stage factors multiply to {product}, but {where_}"),
                        )
                        .label(format!(
                            "[{}] multiplies to {product}, not {size}",
                            list.join(", ")
                        ))
                        .help(format!(
                            "stage lists that fit {size} ranks: {}",
                            sugg.join(", ")
                        ))
                    }
                    StageProblem::Collapse(msg, help) => {
                        Diagnostic::error(Code::CollapseExpand, span, msg)
                            .label("in this stage list")
                            .help(help)
                    }
                    StageProblem::Merge(msg, help) => {
                        Diagnostic::error(Code::MergeMismatch, span, msg)
                            .label("in this stage list")
                            .help(help)
                    }
                };
                self.err(d);
                None
            }
        }
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

#[derive(Debug, PartialEq, Eq)]
pub enum StageProblem {
    /// Factors of a group multiply to `product` instead of `size`; `outer` if the group is all ranks.
    Product {
        product: u64,
        size: u64,
        outer: bool,
    },
    Collapse(String, String),
    Merge(String, String),
}

enum Frame {
    Collapse {
        threshold: u64,
        base: u64,
        outer: u64,
        outer_product: u64,
    },
    Merge {
        remainder: u64,
        groups: u64,
        outer: u64,
        outer_product: u64,
    },
}

/// Finds the first inconsistency of a stage list with `n` ranks, if any.
pub fn stage_problem(stages: &[Stage], n: u64) -> Option<StageProblem> {
    let mut size = n;
    let mut product: u64 = 1;
    let mut stack: Vec<Frame> = Vec::new();
    for st in stages {
        match *st {
            Stage::Factor { base } => product = product.saturating_mul(base),
            Stage::Collapse { threshold, base } => {
                if threshold % base != 0 {
                    return Some(StageProblem::Collapse(
                        format!(
                            "collapse `{st}`: the threshold {threshold} is not divisible by the base {base}"
                        ),
                        format!(
                            "use a threshold that is a multiple of {base}, e.g. `c{}m{base}`",
                            (threshold / base).max(1) * base
                        ),
                    ));
                }
                if threshold > size || threshold == 0 {
                    return Some(StageProblem::Collapse(
                        format!(
                            "collapse `{st}`: the threshold {threshold} does not fit a group of {size} ranks"
                        ),
                        format!("the threshold must be between {base} and {size}"),
                    ));
                }
                if product != 1 {
                    return Some(StageProblem::Collapse(
                        format!("collapse `{st}` comes after factor stages"),
                        "collapse first, then the factor stages of the smaller group, then expand"
                            .into(),
                    ));
                }
                stack.push(Frame::Collapse {
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
                    threshold: t,
                    base: b,
                    outer,
                    outer_product,
                }) if t == threshold && b == base => {
                    if product != size {
                        return Some(StageProblem::Product {
                            product,
                            size,
                            outer: false,
                        });
                    }
                    size = outer;
                    product = outer_product.saturating_mul(size);
                }
                Some(Frame::Collapse {
                    threshold: t,
                    base: b,
                    ..
                }) => {
                    return Some(StageProblem::Collapse(
                        format!("expand `{st}` does not match the collapse `c{t}m{b}`"),
                        format!("write `e{t}m{b}` to undo `c{t}m{b}`"),
                    ));
                }
                Some(Frame::Merge {
                    remainder, groups, ..
                }) => {
                    return Some(StageProblem::Merge(
                        format!(
                            "expand `{st}` comes before the merge `m{remainder}g{groups}a..` is closed"
                        ),
                        format!("close the merge with `n{remainder}g{groups}a<B>` first"),
                    ));
                }
                None => {
                    return Some(StageProblem::Collapse(
                        format!("expand `{st}` has no collapse to undo"),
                        format!("add `c{threshold}m{base}` at the start, or remove `{st}`"),
                    ));
                }
            },
            Stage::Merge {
                remainder,
                groups,
                base,
            } => {
                if product != 1 {
                    return Some(StageProblem::Merge(
                        format!("merge `{st}` must be the first stage of its group"),
                        "put the merge first and its inverse merge last".into(),
                    ));
                }
                if remainder >= size {
                    return Some(StageProblem::Merge(
                        format!(
                            "merge `{st}`: {remainder} remainder ranks leave no ranks of the {size} to merge into"
                        ),
                        "use fewer remainder ranks".into(),
                    ));
                }
                let inner = size - remainder;
                if inner % base != 0 || groups > inner / base {
                    return Some(StageProblem::Merge(
                        format!(
                            "merge `{st}`: {inner} ranks remain after setting {remainder} aside, which do not form {groups} group{} of {base}",
                            if groups == 1 { "" } else { "s" }
                        ),
                        format!(
                            "the base must divide {inner} and the groups must be at most {inner} / base"
                        ),
                    ));
                }
                stack.push(Frame::Merge {
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
                            outer: false,
                        });
                    }
                    size = outer;
                    product = outer_product.saturating_mul(size);
                }
                Some(Frame::Merge {
                    remainder: r,
                    groups: g,
                    ..
                }) => {
                    return Some(StageProblem::Merge(
                        format!("inverse merge `{st}` does not match the merge `m{r}g{g}a..`"),
                        format!("use the same remainder and groups: `n{r}g{g}a<B>`"),
                    ));
                }
                Some(Frame::Collapse {
                    threshold, base: b, ..
                }) => {
                    return Some(StageProblem::Collapse(
                        format!(
                            "inverse merge `{st}` comes before the collapse `c{threshold}m{b}` is expanded"
                        ),
                        format!("expand with `e{threshold}m{b}` first"),
                    ));
                }
                None => {
                    return Some(StageProblem::Merge(
                        format!("inverse merge `{st}` has no merge to undo"),
                        format!("start the list with `m{remainder}g{groups}a<B>`"),
                    ));
                }
            },
        }
    }
    if let Some(f) = stack.pop() {
        return Some(match f {
            Frame::Collapse {
                threshold, base, ..
            } => StageProblem::Collapse(
                format!("collapse `c{threshold}m{base}` is never expanded"),
                format!("end the list with `e{threshold}m{base}`"),
            ),
            Frame::Merge {
                remainder, groups, ..
            } => StageProblem::Merge(
                format!("merge `m{remainder}g{groups}a..` has no inverse merge"),
                format!("make the last stage `n{remainder}g{groups}a<B>`"),
            ),
        });
    }
    if product != size {
        return Some(StageProblem::Product {
            product,
            size,
            outer: true,
        });
    }
    None
}

/// A few stage lists that fit `n` ranks: factorisations with few stages, MPICH's
/// collapse/expand around a power of two, and a merge for primes.
pub fn suggestions(n: u64) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if n <= 1 {
        return vec!["[] (a single rank needs no stages)".into()];
    }
    out.push(format!("[a{n}]"));
    // Two-factor splits, most balanced first.
    let mut d = (n as f64).sqrt() as u64;
    while d >= 2 {
        if n % d == 0 {
            out.push(format!("[a{d}, a{}]", n / d));
            break;
        }
        d -= 1;
    }
    // Power-of-two recursive doubling with MPICH's collapse/expand.
    let p = 1u64 << (63 - n.leading_zeros());
    if p >= 2 {
        let stages: Vec<String> = (0..p.trailing_zeros()).map(|_| "a2".to_string()).collect();
        if p == n {
            if p > 2 && out.len() < 3 {
                out.push(format!("[{}]", stages.join(", ")));
            }
        } else {
            let t = 2 * (n - p);
            out.push(format!("[c{t}m2, {}, e{t}m2]", stages.join(", ")));
        }
    }
    if out.len() < 3 && n >= 5 {
        // Merge one remainder rank into a factorisable n - 1.
        let inner = n - 1;
        let mut d = (inner as f64).sqrt() as u64;
        while d >= 2 {
            if inner % d == 0 {
                out.push(format!("[m1g1a{d}, n1g1a{}]", inner / d));
                break;
            }
            d -= 1;
        }
    }
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
                outer: true
            })
        );
        let s = suggestions(10);
        assert!(s.contains(&"`[a2, a5]`".to_string()), "{s:?}");
        for sug in suggestions(10)
            .iter()
            .chain(suggestions(7).iter())
            .chain(suggestions(64).iter())
        {
            let inner = sug.trim_matches('`').trim_matches(['[', ']']);
            let n: u64 = if suggestions(10).contains(sug) {
                10
            } else if suggestions(7).contains(sug) {
                7
            } else {
                64
            };
            assert_eq!(stage_problem(&list(inner), n), None, "{sug} for {n}");
        }
    }

    #[test]
    fn collapse_threshold_must_divide() {
        assert!(matches!(
            stage_problem(&list("c5m2, a4, e5m2"), 6),
            Some(StageProblem::Collapse(..))
        ));
    }

    #[test]
    fn decode_rejects_garbage() {
        assert!(decode_stage("x3").is_none());
        assert!(decode_stage("a").is_none());
        assert!(decode_stage("a1").unwrap().is_err());
        assert!(decode_stage("c8m").is_none());
    }
}
