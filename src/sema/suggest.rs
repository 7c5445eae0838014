//! "Did you mean" suggestions by edit distance.

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

/// The candidate closest to `name`, if it is close enough to be a likely typo. Ties go to the
/// alphabetically first candidate so the suggestion is deterministic.
pub fn closest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let d = distance(name, c);
        if d <= limit && best.is_none_or(|(bd, bs)| d < bd || (d == bd && c < bs)) {
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
}
