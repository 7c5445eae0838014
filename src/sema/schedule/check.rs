//! The rank/factor consistency check of a stage list ([`stage_problem`]): walks the stages with a
//! stack of open collapses and merges, following the semantics in the parent module's doc.

use super::fault::{Fault, StageProblem};
use crate::sema::model::Stage;

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
pub(super) fn merge_example(inner: u64, remainder: u64, groups: u64) -> Option<String> {
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
