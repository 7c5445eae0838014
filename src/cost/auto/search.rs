//! The search behind [`auto_with`](super::auto_with): exact cost comparison of [`Lin`]s under fixed
//! parameters ([`Weights`]), the running best with its lexicographic tie-break ([`Top`]), and the
//! memoised best factor list and multiplicative-partition counts per group size ([`Search`]).

use super::divisors_of;
use crate::cost::{Lin, Params, factor_lin};
use crate::sema::model::Stage;
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, ToPrimitive};
use rustc_hash::FxHashMap;
use std::cmp::Ordering;

/// Exact cost comparison for [`Lin`]s under fixed parameters: the three weights of a [`Lin`]
/// (`alpha_p`, `alpha_r + n beta`, `n gamma`) as integers over a common denominator.
pub(super) struct Weights {
    big: [BigInt; 3],
    /// The same in `i128`, when small enough that no cost can overflow.
    pub(super) fast: Option<[i128; 3]>,
}

impl Weights {
    pub(super) fn new(p: &Params, bytes: u64) -> Weights {
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
    pub(super) fn cmp(&self, x: &Lin, y: &Lin) -> Ordering {
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

pub(super) fn lex(a: &[Stage], b: &[Stage]) -> Ordering {
    a.iter().map(stage_key).cmp(b.iter().map(stage_key))
}

/// The best candidate so far.
#[derive(Default)]
pub(super) struct Top {
    pub(super) best: Option<(Lin, Vec<Stage>)>,
}

impl Top {
    /// Considers a candidate of cost `lin`; builds its stage list only when it may win.
    pub(super) fn offer(&mut self, w: &Weights, lin: Lin, stages: impl FnOnce() -> Vec<Stage>) {
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
pub(super) struct Search<'w> {
    w: &'w Weights,
    /// Best multiset of factors of `x`: its cost and one factor `f` of it (the rest is the best
    /// multiset of `x / f`).
    best: FxHashMap<u64, (Lin, u64)>,
    divs: FxHashMap<u64, Vec<u64>>,
    /// Number of factor multisets, by prime signature (sorted exponents).
    counts: FxHashMap<Vec<u32>, u128>,
    /// `(x, k)`: multisets of factors `>= k` with product `x`.
    partial: FxHashMap<(u64, u64), u128>,
    /// The largest factor [`Search::best`] takes.
    cap: Option<u64>,
}

/// The cost of a group size with no factor list under the cap: dearer than any list (sums
/// saturate), so no candidate holding it is chosen while another exists (one always does:
/// factors of 2 around the largest power of two).
const OVER_CAP: Lin = Lin {
    stages: u64::MAX,
    msgs: u64::MAX,
    reduces: u64::MAX,
};

impl<'w> Search<'w> {
    /// A search among factors of at most `cap` (all factors for None).
    pub(super) fn new(w: &'w Weights, cap: Option<u64>) -> Search<'w> {
        Search {
            w,
            cap,
            best: FxHashMap::default(),
            divs: FxHashMap::default(),
            counts: FxHashMap::default(),
            partial: FxHashMap::default(),
        }
    }

    pub(super) fn divisors(&mut self, x: u64) -> Vec<u64> {
        self.divs.entry(x).or_insert_with(|| divisors_of(x)).clone()
    }

    /// The cheapest multiset of factors `>= 2` (and at most the cap) multiplying to `x`
    /// (`x = 1`: none).
    pub(super) fn best(&mut self, x: u64) -> Lin {
        if x <= 1 {
            return Lin::ZERO;
        }
        if let Some(&(l, _)) = self.best.get(&x) {
            return l;
        }
        let divs = self.divisors(x);
        let mut cur: Option<(Lin, u64)> = None;
        let cap = self.cap.unwrap_or(u64::MAX);
        for &f in divs.iter().skip(1).filter(|&&f| f <= cap) {
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
        // Every divisor is over the cap (x's divisors include x): no list.
        let (lin, f) = cur.unwrap_or((OVER_CAP, x));
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
    pub(super) fn list(&self, x: u64) -> Vec<u64> {
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
    pub(super) fn count(&mut self, x: u64) -> u128 {
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

pub(super) fn next_prime(p: u64) -> u64 {
    let mut q = p + 1;
    while (2..q).take_while(|d| d * d <= q).any(|d| q % d == 0) {
        q += 1;
    }
    q
}
