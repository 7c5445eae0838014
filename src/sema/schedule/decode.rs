//! Stage words as text: decoding `a4`, `c8m2`, `e8m2`, `m1g1a3`, `n1g1a2` into [`Stage`]s, and
//! suggesting stage lists that fit a rank count.

use crate::sema::model::Stage;

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
