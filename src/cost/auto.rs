//! `stages: auto`: the cheapest recursive-multiplying stage list for `N` ranks under a cost model
//! (../shared/seeds/recursive-multiplying.txt, Section 4.1: "combine small factors ... find all
//! possible schedules ... use the models of Section 3 to predict the required time").
//!
//! # Search space
//!
//! Every candidate passes `sema::schedule::stage_problem` (tested), and is one of
//! - a factor list `aB1, ..., aBs` with `prod Bi = N`, all `Bi >= 2`;
//! - a collapse `cTmB <factor list of M> eTmB` with `B` in 2..=8, `T = jB <= N` and
//!   `M = T/B + N - T = N - j(B-1)`, where `M` is 13-smooth (no prime factor above 13: those are
//!   the group sizes with cheap factorisations) or among the 32 largest reachable sizes
//!   (`j <= 32`). MPICH's power of two (`B = 2`, `M = 2^floor(log2 N)`) is always included, so
//!   the choice is never dearer than recursive doubling; for `N <= 64` every `T` is tried;
//! - a merge `mRgGaB <factors> nRgGaB'` with `R` in 1..=8, `1 <= G <= min(R, (N-R)/B)` and
//!   `B * (factors) * B' = N - R`.
//!
//! The cost of a schedule is the sum of its stage costs (see [`crate::cost`]), which does not
//! depend on the order of the factor stages, so factor lists are searched as multisets: the best
//! multiset for each group size is memoised over its divisors (`best(x) = min over f | x of
//! cost(af) + best(x/f)`), and shared between the top level, every collapse's inner group and
//! every merge. Factor lists are returned in descending order, like the paper's "a8,a4,a4";
//! a merge keeps its own first and last factor in place and sorts the ones between.
//!
//! Costs are compared exactly: every stage cost is `a alpha_p + b (alpha_r + n beta) + c n gamma`
//! with whole `a, b, c` ([`Lin`]), so a schedule's cost is three integers and comparing two
//! costs is integer arithmetic over a common denominator (`i128`, or big integers when the
//! parameters are too large for it).
//! Ties are broken by fewer stages, then lexicographically on the stage list: factor stages
//! before collapse before merge, larger bases first (so that among equally cheap lists the
//! factors read in descending order, also across a merge group: `m1g1a13, a7, ..., n1g1a4`),
//! smaller thresholds, remainders and group counts first.
//!
//! `candidates` counts the distinct stage lists of this space (as multisets of factors), which
//! the memoised search covers without listing them. For 65,536 ranks the search takes a few
//! milliseconds (see tests/cost.rs).

use super::{Lin, Params, doubling_stages, expand_lin, factor_lin, inv_merge_lin, merge_lin};
use crate::sema::model::{CostModel, Stage};
use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, ToPrimitive};
use rustc_hash::FxHashMap;
use std::cmp::Ordering;
use std::collections::BTreeSet;

/// Collapse bases tried.
const COLLAPSE_BASES: std::ops::RangeInclusive<u64> = 2..=8;
/// Collapsed group sizes with only these prime factors are always tried.
const SMOOTH_PRIMES: &[u64] = &[2, 3, 5, 7, 11, 13];
/// The largest collapsed group sizes (`j <= NEAREST`) are tried whatever their factors.
const NEAREST: u64 = 32;
/// Merge remainders tried.
const MAX_REMAINDER: u64 = 8;

/// The result of [`auto_stages`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutoChoice {
    /// The cheapest stage list (empty for a single rank).
    pub stages: Vec<Stage>,
    /// Its modelled cost in seconds.
    pub cost: BigRational,
    /// The modelled cost of MPICH's recursive doubling (collapse/expand around the largest power
    /// of two) under the same model.
    pub recursive_doubling_cost: BigRational,
    /// How many distinct stage lists the search covered.
    pub candidates: usize,
}

/// The cheapest stage list for `n` ranks and `bytes`-byte messages under `model`
/// (`None`: the paper's Section 6 parameters, [`Params::paper_section6`]).
pub fn auto_stages(n: u64, model: Option<&CostModel>, bytes: u64) -> AutoChoice {
    auto_with(n, &Params::for_model(model), bytes)
}

/// [`auto_stages`] with explicit parameters.
pub fn auto_with(n: u64, params: &Params, bytes: u64) -> AutoChoice {
    let w = Weights::new(params, bytes);
    let rd = doubling_stages(n);
    let rd_cost = super::schedule_cost_with(&rd, n, params, bytes);
    if n <= 1 {
        return AutoChoice {
            stages: Vec::new(),
            cost: rd_cost.clone(),
            recursive_doubling_cost: rd_cost,
            candidates: 1,
        };
    }
    let mut s = Search::new(&w);
    let mut top = Top::default();
    let mut count: u128 = 0;

    // Plain factor lists.
    let lin = s.best(n);
    count = count.saturating_add(s.count(n));
    top.offer(&w, lin, || factor_stages(&s.list(n)));

    // Collapse / expand around a smaller group.
    let smooth = smooth_numbers(n);
    for b in COLLAPSE_BASES {
        for m in collapse_inners(n, b, &smooth) {
            let t = (n - m) / (b - 1) * b;
            let lin = factor_lin(b) + expand_lin(b) + s.best(m);
            count = count.saturating_add(s.count(m));
            top.offer(&w, lin, || {
                let mut st = vec![Stage::Collapse {
                    threshold: t,
                    base: b,
                }];
                st.extend(factor_stages(&s.list(m)));
                st.push(Stage::Expand {
                    threshold: t,
                    base: b,
                });
                st
            });
        }
    }

    // Merges of a few remainder ranks.
    for r in 1..=MAX_REMAINDER.min(n.saturating_sub(4)) {
        let m = n - r;
        let divs = s.divisors(m);
        for &b in divs.iter().filter(|&&b| b >= 2 && b < m) {
            let rest = m / b;
            for &bs in divs.iter().filter(|&&d| d >= 2 && rest % d == 0) {
                let mid = rest / bs;
                let inner = s.best(mid);
                let ways = s.count(mid);
                for g in 1..=r.min(rest) {
                    let lin = merge_lin(r, g, b) + inv_merge_lin(r, g, bs, m) + inner;
                    count = count.saturating_add(ways);
                    top.offer(&w, lin, || {
                        let mut st = vec![Stage::Merge {
                            remainder: r,
                            groups: g,
                            base: b,
                        }];
                        st.extend(factor_stages(&s.list(mid)));
                        st.push(Stage::InvMerge {
                            remainder: r,
                            groups: g,
                            base: bs,
                        });
                        st
                    });
                }
            }
        }
    }

    let (lin, stages) = top.best.unwrap_or_else(|| (Lin::ZERO, Vec::new()));
    AutoChoice {
        stages,
        cost: lin.seconds(params, bytes),
        recursive_doubling_cost: rd_cost,
        candidates: usize::try_from(count).unwrap_or(usize::MAX),
    }
}

fn factor_stages(factors: &[u64]) -> Vec<Stage> {
    factors.iter().map(|&base| Stage::Factor { base }).collect()
}

/// The inner group sizes tried for collapses with base `b` on `n` ranks, largest first:
/// `M = n - j(b-1)` with `1 <= j`, `jb <= n`, and `M` smooth or `j <= NEAREST`.
pub(crate) fn collapse_inners(n: u64, b: u64, smooth: &[u64]) -> Vec<u64> {
    if b < 2 || b > n {
        return Vec::new();
    }
    let (step, jmax) = (b - 1, n / b);
    let mut set: BTreeSet<u64> = (1..=jmax.min(NEAREST)).map(|j| n - j * step).collect();
    for &m in smooth {
        if m < n && (n - m) % step == 0 && (n - m) / step <= jmax {
            set.insert(m);
        }
    }
    set.into_iter().rev().collect()
}

/// Every number up to `limit` whose prime factors are all in [`SMOOTH_PRIMES`] (with 1).
pub(crate) fn smooth_numbers(limit: u64) -> Vec<u64> {
    let mut out = vec![1u64];
    for &p in SMOOTH_PRIMES {
        let mut i = 0;
        // Multiply every number found so far (including new ones) by p while it fits.
        while i < out.len() {
            if let Some(x) = out[i].checked_mul(p).filter(|x| *x <= limit) {
                out.push(x);
            }
            i += 1;
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Divisors of `x` in increasing order (trial division).
fn divisors_of(x: u64) -> Vec<u64> {
    let mut primes: Vec<(u64, u32)> = Vec::new();
    let mut y = x;
    let mut p = 2u64;
    while p.saturating_mul(p) <= y {
        if y % p == 0 {
            let mut e = 0;
            while y % p == 0 {
                y /= p;
                e += 1;
            }
            primes.push((p, e));
        }
        p += if p == 2 { 1 } else { 2 };
    }
    if y > 1 {
        primes.push((y, 1));
    }
    let mut out = vec![1u64];
    for (p, e) in primes {
        let len = out.len();
        let mut pk = 1u64;
        for _ in 0..e {
            pk *= p;
            for i in 0..len {
                out.push(out[i] * pk);
            }
        }
    }
    out.sort_unstable();
    out
}

/// Exact cost comparison for [`Lin`]s under fixed parameters: the three weights of a [`Lin`]
/// (`alpha_p`, `alpha_r + n beta`, `n gamma`) as integers over a common denominator.
struct Weights {
    big: [BigInt; 3],
    /// The same in `i128`, when small enough that no cost can overflow.
    fast: Option<[i128; 3]>,
}

impl Weights {
    fn new(p: &Params, bytes: u64) -> Weights {
        let exact = [p.alpha_p.clone(), p.per_message(bytes), p.per_reduce(bytes)];
        let den = exact
            .iter()
            .fold(BigInt::one(), |acc, x| acc.lcm(x.denom()));
        let big = exact.map(|x| x.numer() * (&den / x.denom()));
        let limit = 1i128 << 80;
        let fast: Option<Vec<i128>> = big
            .iter()
            .map(|v| v.to_i128().filter(|v| v.abs() < limit))
            .collect();
        let fast = fast.and_then(|v| <[i128; 3]>::try_from(v).ok());
        Weights { big, fast }
    }

    fn fast_value(&self, l: &Lin) -> Option<i128> {
        let [a, b, c] = self.fast?;
        let t = |x: i128, k: u64| x.checked_mul(i128::from(k));
        t(a, l.stages)?
            .checked_add(t(b, l.msgs)?)?
            .checked_add(t(c, l.reduces)?)
    }

    fn big_value(&self, l: &Lin) -> BigInt {
        &self.big[0] * l.stages + &self.big[1] * l.msgs + &self.big[2] * l.reduces
    }

    /// By cost, then by number of stages.
    fn cmp(&self, x: &Lin, y: &Lin) -> Ordering {
        let by_cost = match (self.fast_value(x), self.fast_value(y)) {
            (Some(a), Some(b)) => a.cmp(&b),
            _ => self.big_value(x).cmp(&self.big_value(y)),
        };
        by_cost.then(x.stages.cmp(&y.stages))
    }
}

/// A total order on stages for the lexicographic tie-break: kinds in the order factor,
/// collapse, expand, merge, inverse merge; a larger base first, so that among equally cheap
/// lists the factors read in descending order, like the paper's "a8,a4,a4".
fn stage_key(s: &Stage) -> (u8, u64, u64, u64) {
    let desc = |b: u64| u64::MAX - b;
    match *s {
        Stage::Factor { base } => (0, desc(base), 0, 0),
        Stage::Collapse { threshold, base } => (1, threshold, base, 0),
        Stage::Expand { threshold, base } => (2, threshold, base, 0),
        Stage::Merge {
            remainder,
            groups,
            base,
        } => (3, remainder, groups, desc(base)),
        Stage::InvMerge {
            remainder,
            groups,
            base,
        } => (4, remainder, groups, desc(base)),
    }
}

fn lex(a: &[Stage], b: &[Stage]) -> Ordering {
    a.iter().map(stage_key).cmp(b.iter().map(stage_key))
}

/// The best candidate so far.
#[derive(Default)]
struct Top {
    best: Option<(Lin, Vec<Stage>)>,
}

impl Top {
    /// Considers a candidate of cost `lin`; builds its stage list only when it may win.
    fn offer(&mut self, w: &Weights, lin: Lin, stages: impl FnOnce() -> Vec<Stage>) {
        match &self.best {
            Some((cur, list)) => match w.cmp(&lin, cur) {
                Ordering::Greater => {}
                Ordering::Less => self.best = Some((lin, stages())),
                Ordering::Equal => {
                    let st = stages();
                    if lex(&st, list) == Ordering::Less {
                        self.best = Some((lin, st));
                    }
                }
            },
            None => self.best = Some((lin, stages())),
        }
    }
}

/// Memoised best factor lists and counts of factor lists, per group size.
struct Search<'w> {
    w: &'w Weights,
    /// Best multiset of factors of `x`: its cost and one factor `f` of it (the rest is the best
    /// multiset of `x / f`).
    best: FxHashMap<u64, (Lin, u64)>,
    divs: FxHashMap<u64, Vec<u64>>,
    /// Number of factor multisets, by prime signature (sorted exponents).
    counts: FxHashMap<Vec<u32>, u128>,
    /// `(x, k)`: multisets of factors `>= k` with product `x`.
    partial: FxHashMap<(u64, u64), u128>,
}

impl<'w> Search<'w> {
    fn new(w: &'w Weights) -> Search<'w> {
        Search {
            w,
            best: FxHashMap::default(),
            divs: FxHashMap::default(),
            counts: FxHashMap::default(),
            partial: FxHashMap::default(),
        }
    }

    fn divisors(&mut self, x: u64) -> Vec<u64> {
        self.divs.entry(x).or_insert_with(|| divisors_of(x)).clone()
    }

    /// The cheapest multiset of factors `>= 2` multiplying to `x` (`x = 1`: none).
    fn best(&mut self, x: u64) -> Lin {
        if x <= 1 {
            return Lin::ZERO;
        }
        if let Some(&(l, _)) = self.best.get(&x) {
            return l;
        }
        let divs = self.divisors(x);
        let mut cur: Option<(Lin, u64)> = None;
        for &f in divs.iter().skip(1) {
            let lin = factor_lin(f) + self.best(x / f);
            let take = match cur {
                None => true,
                Some((c, cf)) => match self.w.cmp(&lin, &c) {
                    Ordering::Less => true,
                    Ordering::Greater => false,
                    Ordering::Equal => self.list_with(x, f) > self.list_with(x, cf),
                },
            };
            if take {
                cur = Some((lin, f));
            }
        }
        let (lin, f) = cur.unwrap_or((factor_lin(x), x));
        self.best.insert(x, (lin, f));
        lin
    }

    /// `f` and the best list of `x / f`, in descending order.
    fn list_with(&self, x: u64, f: u64) -> Vec<u64> {
        let mut v = self.list(x / f);
        v.push(f);
        v.sort_unstable_by(|a, b| b.cmp(a));
        v
    }

    /// The best list of `x` (after [`Search::best`]), in descending order.
    fn list(&self, x: u64) -> Vec<u64> {
        let mut out = Vec::new();
        let mut y = x;
        while y > 1 {
            let Some(&(_, f)) = self.best.get(&y) else {
                out.push(y);
                break;
            };
            out.push(f);
            y /= f;
        }
        out.sort_unstable_by(|a, b| b.cmp(a));
        out
    }

    /// How many multisets of factors `>= 2` multiply to `x` (1 for `x = 1`: the empty one).
    /// Depends only on `x`'s prime signature, so it is computed once per signature on the
    /// smallest number with that signature.
    fn count(&mut self, x: u64) -> u128 {
        if x <= 1 {
            return 1;
        }
        let mut sig: Vec<u32> = Vec::new();
        let mut y = x;
        let mut p = 2u64;
        while p.saturating_mul(p) <= y {
            let mut e = 0;
            while y % p == 0 {
                y /= p;
                e += 1;
            }
            if e > 0 {
                sig.push(e);
            }
            p += if p == 2 { 1 } else { 2 };
        }
        if y > 1 {
            sig.push(1);
        }
        sig.sort_unstable_by(|a, b| b.cmp(a));
        if let Some(&c) = self.counts.get(&sig) {
            return c;
        }
        // The smallest number with this signature: 2^e1 3^e2 5^e3 ... (e1 >= e2 >= ...).
        let mut rep = 1u64;
        let mut prime = 1u64;
        for &e in &sig {
            prime = next_prime(prime);
            rep = rep.saturating_mul(prime.saturating_pow(e));
        }
        let c = if rep <= x {
            self.partitions(rep, 2)
        } else {
            self.partitions(x, 2)
        };
        self.counts.insert(sig, c);
        c
    }

    /// Multisets of factors `>= k` with product `x` (`x >= 2`).
    fn partitions(&mut self, x: u64, k: u64) -> u128 {
        if let Some(&c) = self.partial.get(&(x, k)) {
            return c;
        }
        let mut c: u128 = u128::from(x >= k);
        for f in self.divisors(x) {
            if f < k || f < 2 {
                continue;
            }
            if f.saturating_mul(f) > x {
                break;
            }
            c = c.saturating_add(self.partitions(x / f, f));
        }
        self.partial.insert((x, k), c);
        c
    }
}

fn next_prime(p: u64) -> u64 {
    let mut q = p + 1;
    while (2..q).take_while(|d| d * d <= q).any(|d| q % d == 0) {
        q += 1;
    }
    q
}

#[cfg(test)]
mod tests {
    use super::super::{schedule_cost_with, stage_lins};
    use super::*;
    use crate::sema::schedule::stage_problem;
    use num_traits::Zero;

    fn ns(x: i64) -> BigRational {
        BigRational::new(x.into(), 1_000_000_000.into())
    }

    fn params(ap: i64, ar: i64, beta_ps: i64, gamma_ps: i64) -> Params {
        Params {
            alpha_p: ns(ap),
            alpha_r: ns(ar),
            beta: BigRational::new(beta_ps.into(), 1_000_000_000_000i64.into()),
            gamma: BigRational::new(gamma_ps.into(), 1_000_000_000_000i64.into()),
        }
    }

    /// Every multiset of factors `>= min` multiplying to `x`, descending.
    fn multisets(x: u64, min: u64) -> Vec<Vec<u64>> {
        if x == 1 {
            return vec![Vec::new()];
        }
        let mut out = Vec::new();
        for f in (min.max(2)..=x).filter(|f| x % f == 0) {
            for mut rest in multisets(x / f, f) {
                rest.push(f);
                rest.sort_unstable_by(|a, b| b.cmp(a));
                out.push(rest);
            }
        }
        out
    }

    /// The search space of the module doc, listed explicitly.
    fn space(n: u64) -> Vec<Vec<Stage>> {
        let mut out: Vec<Vec<Stage>> = multisets(n, 2).iter().map(|f| factor_stages(f)).collect();
        let smooth = smooth_numbers(n);
        for b in COLLAPSE_BASES {
            for m in collapse_inners(n, b, &smooth) {
                let t = (n - m) / (b - 1) * b;
                for inner in multisets(m, 2) {
                    let mut st = vec![Stage::Collapse {
                        threshold: t,
                        base: b,
                    }];
                    st.extend(factor_stages(&inner));
                    st.push(Stage::Expand {
                        threshold: t,
                        base: b,
                    });
                    out.push(st);
                }
            }
        }
        for r in 1..=MAX_REMAINDER.min(n.saturating_sub(4)) {
            let m = n - r;
            for b in (2..m).filter(|b| m % b == 0) {
                for bs in (2..=m / b).filter(|d| (m / b) % d == 0) {
                    for g in 1..=r.min(m / b) {
                        for mid in multisets(m / b / bs, 2) {
                            let mut st = vec![Stage::Merge {
                                remainder: r,
                                groups: g,
                                base: b,
                            }];
                            st.extend(factor_stages(&mid));
                            st.push(Stage::InvMerge {
                                remainder: r,
                                groups: g,
                                base: bs,
                            });
                            out.push(st);
                        }
                    }
                }
            }
        }
        out
    }

    /// The memoised search finds the same optimum (with the same tie-break) as listing the whole
    /// space, counts it right, and every candidate is valid.
    #[test]
    fn search_matches_brute_force() {
        let models = [
            params(500, 100, 400, 1250),
            params(1340, 340, 0, 0),
            params(1000, 1000, 0, 0),
            params(0, 100, 0, 0),
            params(3000, 100, 0, 0),
            params(0, 0, 0, 0),
        ];
        for n in 2..=72u64 {
            let all = space(n);
            for st in &all {
                assert_eq!(stage_problem(st, n), None, "{n}: {st:?}");
            }
            for (mi, p) in models.iter().enumerate() {
                let w = Weights::new(p, 8);
                let mut best: Option<(Lin, &Vec<Stage>)> = None;
                for st in &all {
                    let lin = stage_lins(st, n).into_iter().fold(Lin::ZERO, |a, b| a + b);
                    let better = match &best {
                        None => true,
                        Some((c, l)) => match w.cmp(&lin, c) {
                            Ordering::Less => true,
                            Ordering::Greater => false,
                            Ordering::Equal => lex(st, l) == Ordering::Less,
                        },
                    };
                    if better {
                        best = Some((lin, st));
                    }
                }
                let (lin, want) = best.unwrap();
                let got = auto_with(n, p, 8);
                assert_eq!(&got.stages, want, "n = {n}, model {mi}");
                assert_eq!(got.cost, lin.seconds(p, 8));
                assert_eq!(got.cost, schedule_cost_with(&got.stages, n, p, 8));
                assert_eq!(got.candidates, all.len(), "n = {n}");
                assert!(got.cost <= got.recursive_doubling_cost);
            }
        }
    }

    #[test]
    fn single_rank_and_zero_costs() {
        let p = params(500, 100, 0, 0);
        let one = auto_with(1, &p, 8);
        assert!(one.stages.is_empty() && one.cost.is_zero() && one.candidates == 1);
        // With everything free the fewest stages win: one stage of everyone.
        let free = auto_with(48, &params(0, 0, 0, 0), 8);
        assert_eq!(free.stages, vec![Stage::Factor { base: 48 }]);
    }

    /// Parameters too large for the integer fast path compare exactly as rationals: scaling
    /// every parameter by 3^70 changes no choice and scales every cost.
    #[test]
    fn huge_parameters_use_the_exact_path() {
        let p = params(500, 100, 400, 1250);
        let k = BigRational::from_integer(BigInt::from(3).pow(70u32));
        let big = Params {
            alpha_p: &p.alpha_p * &k,
            alpha_r: &p.alpha_r * &k,
            beta: &p.beta * &k,
            gamma: &p.gamma * &k,
        };
        assert!(Weights::new(&big, 8).fast.is_none());
        assert!(Weights::new(&p, 8).fast.is_some());
        for n in [7u64, 48, 96, 1000, 1023] {
            let (a, b) = (auto_with(n, &p, 8), auto_with(n, &big, 8));
            assert_eq!(a.stages, b.stages, "{n}");
            assert_eq!(&a.cost * &k, b.cost);
            assert_eq!(a.candidates, b.candidates);
        }
    }

    #[test]
    fn smooth_and_divisors() {
        let s = smooth_numbers(30);
        assert_eq!(
            s,
            vec![
                1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 20, 21, 22, 24, 25, 26,
                27, 28, 30
            ]
        );
        assert_eq!(divisors_of(36), vec![1, 2, 3, 4, 6, 9, 12, 18, 36]);
        assert_eq!(divisors_of(97), vec![1, 97]);
        assert_eq!(next_prime(7), 11);
    }

    #[test]
    fn counts_multiplicative_partitions() {
        let w = Weights::new(&params(1, 1, 0, 0), 0);
        let mut s = Search::new(&w);
        // OEIS A001055: 1, 1, 1, 2, 1, 2, 1, 3, 2, 2, 1, 4 (n = 1..12); 16 -> 5, 24 -> 7,
        // 36 -> 9, 48 -> 12, 64 -> 11, 96 -> 19.
        let want = [1u128, 1, 1, 2, 1, 2, 1, 3, 2, 2, 1, 4];
        for (i, c) in want.iter().enumerate() {
            assert_eq!(s.count(i as u64 + 1), *c, "{}", i + 1);
        }
        for (x, c) in [
            (16u64, 5u128),
            (24, 7),
            (36, 9),
            (48, 12),
            (64, 11),
            (96, 19),
        ] {
            assert_eq!(s.count(x), c, "{x}");
            assert_eq!(s.count(x), multisets(x, 2).len() as u128);
        }
    }
}
