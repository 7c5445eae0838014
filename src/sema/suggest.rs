//! "Did you mean" suggestions by edit distance.
//!
//! A suggestion is at most [`MAX_EDITS`] edits away, so [`closest`] computes only the cells of
//! the edit-distance table within that many of its diagonal: time linear in the names' length.
//! The full table cost the square of it, for every error: a misspelt identifier of 30,000
//! characters in a loop of a few thousand iterations (each reports it again) took minutes to
//! check (issue 41).

/// Edit distance between two short strings: insertions, deletions, substitutions and swaps of
/// two adjacent characters (`rign` is one edit from `ring`) each count one.
pub fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // d[i][j]: distance between a[..i] and b[..j]; three rows suffice for the swap case.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                cur[j] = cur[j].min(before[j - 2] + 1);
            }
        }
        std::mem::swap(&mut before, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The most edits a suggestion is away from the name written.
pub const MAX_EDITS: usize = 8;

/// [`distance`] when it is at most `k`, else None; and the number of table cells computed
/// (at most `2k + 1` per character of `a`).
fn within(a: &[char], b: &[char], k: usize) -> (Option<usize>, usize) {
    if a.len().abs_diff(b.len()) > k {
        return (None, 0);
    }
    let far = k + 1;
    let m = b.len();
    // Rows i-2, i-1 and i of the table; only columns within k of the diagonal are written,
    // and the column just past each end of a row's band holds `far`.
    let mut before: Vec<usize> = vec![far; m + 2];
    let mut prev: Vec<usize> = vec![far; m + 2];
    let mut cur: Vec<usize> = vec![far; m + 2];
    for (j, x) in prev.iter_mut().enumerate().take(m.min(k) + 1) {
        *x = j;
    }
    let mut cells = 0;
    for i in 1..=a.len() {
        let lo = i.saturating_sub(k).max(1);
        let hi = (i + k).min(m);
        cur[lo - 1] = if lo == 1 { i } else { far };
        for j in lo..=hi {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(before[j - 2] + 1);
            }
            cur[j] = v.min(far);
        }
        cells += hi + 1 - lo.min(hi + 1);
        cur[hi + 1] = far;
        std::mem::swap(&mut before, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    let d = prev[m];
    ((d <= k).then_some(d), cells)
}

/// The candidate closest to `name`, if it is close enough to be a likely typo: at most a third
/// of its length away (at least 1, at most [`MAX_EDITS`]). Ties go to the alphabetically first
/// candidate so the suggestion is deterministic.
pub fn closest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let a: Vec<char> = name.chars().collect();
    let limit = (a.len() / 3).clamp(1, MAX_EDITS);
    let mut best: Option<(usize, &str)> = None;
    let mut b: Vec<char> = Vec::new();
    for c in candidates {
        b.clear();
        b.extend(c.chars());
        let Some(d) = within(&a, &b, limit).0 else {
            continue;
        };
        if best.is_none_or(|(bd, bs)| d < bd || (d == bd && c < bs)) {
            best = Some((d, c));
        }
    }
    best.map(|(_, s)| s)
}

#[cfg(test)]
mod tests {
    #[test]
    fn finds_typos() {
        assert_eq!(
            super::closest("alreduce", ["allreduce", "allgather"].into_iter()),
            Some("allreduce")
        );
        assert_eq!(super::closest("zzz", ["allreduce"].into_iter()), None);
        assert_eq!(
            super::closest("rign", ["ring", "tree"].into_iter()),
            Some("ring")
        );
        assert_eq!(super::distance("abc", "abc"), 0);
        assert_eq!(super::distance("ab", "ba"), 1);
        assert_eq!(super::distance("kitten", "sitting"), 3);
        assert_eq!(super::distance("", "abc"), 3);
    }

    /// The banded table agrees with the full one wherever the distance is within the band,
    /// and says None beyond it.
    #[test]
    fn the_band_agrees_with_the_full_table() {
        let words = [
            "",
            "a",
            "ab",
            "ba",
            "abc",
            "acb",
            "kitten",
            "sitting",
            "ring",
            "rign",
            "allreduce",
            "alreduce",
            "allgather",
            "recursive_doubling",
            "recursive_dobuling",
            "xyzzy",
        ];
        for a in words {
            for b in words {
                let (ca, cb): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
                let d = super::distance(a, b);
                for k in 0..12 {
                    let got = super::within(&ca, &cb, k).0;
                    assert_eq!(got, (d <= k).then_some(d), "{a} {b} {k}");
                }
            }
        }
    }

    /// A misspelt name of 30,000 characters: found with at most 2k + 1 cells a character
    /// (the full table has 9 * 10^8).
    #[test]
    fn long_names_cost_linear_time() {
        let name: Vec<char> = "x".repeat(30_000).chars().collect();
        let mut typo = name.clone();
        typo[15_000] = 'y';
        let k = super::MAX_EDITS;
        let (d, cells) = super::within(&typo, &name, k);
        assert_eq!(d, Some(1));
        assert!(cells <= (2 * k + 1) * name.len(), "{cells}");
        assert!(cells >= name.len(), "{cells}");
        let long = "x".repeat(30_000);
        let typo: String = typo.into_iter().collect();
        assert_eq!(
            super::closest(&typo, [long.as_str(), "x"].into_iter()),
            Some(long.as_str())
        );
    }
}
