//! Hash-consed combination terms for the verifier's symbolic execution.
//!
//! A term is a leaf `(rank, input slot)` or an unordered pair of terms: IEEE addition and
//! multiplication are commutative but not associative, so two terms are equal exactly when the
//! computations are bitwise equal. Interning makes equal terms share one id, and every term
//! records the input slot its contributions come from and the sorted ranks it combines, which
//! is what the postcondition needs; building a pair of terms that share a rank is a duplicated
//! contribution.
//!
//! Rank sets are bitsets when the program has at most [`BITSET_RANKS`] ranks (merging is a few
//! word operations, which keeps ring schedules with one chunk per rank cheap) and sorted vectors
//! above that (recursive schedules on tens of thousands of ranks build few, shared terms).

use rustc_hash::FxHashMap;

/// Largest rank count for which rank sets are bitsets.
pub const BITSET_RANKS: u32 = 4096;

/// The ranks a term combines.
pub enum RankSet {
    Bits(Box<[u64]>),
    Sorted(Vec<u32>),
}

impl RankSet {
    pub fn len(&self) -> usize {
        match self {
            RankSet::Bits(b) => b.iter().map(|w| w.count_ones() as usize).sum(),
            RankSet::Sorted(v) => v.len(),
        }
    }

    /// The ranks in increasing order.
    pub fn to_vec(&self) -> Vec<u32> {
        match self {
            RankSet::Sorted(v) => v.clone(),
            RankSet::Bits(b) => {
                let mut out = Vec::new();
                for (i, w) in b.iter().enumerate() {
                    let mut w = *w;
                    while w != 0 {
                        out.push(i as u32 * 64 + w.trailing_zeros());
                        w &= w - 1;
                    }
                }
                out
            }
        }
    }

    fn min(&self) -> u32 {
        match self {
            RankSet::Sorted(v) => v.first().copied().unwrap_or(0),
            RankSet::Bits(b) => b
                .iter()
                .enumerate()
                .find(|(_, w)| **w != 0)
                .map(|(i, w)| i as u32 * 64 + w.trailing_zeros())
                .unwrap_or(0),
        }
    }

    /// The union of two disjoint sets, or the smallest rank they share.
    fn union(&self, other: &RankSet) -> Result<RankSet, u32> {
        match (self, other) {
            (RankSet::Bits(a), RankSet::Bits(b)) => {
                let mut out = Vec::with_capacity(a.len());
                for (i, (x, y)) in a.iter().zip(b.iter()).enumerate() {
                    if x & y != 0 {
                        return Err(i as u32 * 64 + (x & y).trailing_zeros());
                    }
                    out.push(x | y);
                }
                Ok(RankSet::Bits(out.into_boxed_slice()))
            }
            _ => {
                let (ra, rb) = (self.to_vec(), other.to_vec());
                let mut merged = Vec::with_capacity(ra.len() + rb.len());
                let (mut i, mut j) = (0, 0);
                while i < ra.len() && j < rb.len() {
                    match ra[i].cmp(&rb[j]) {
                        std::cmp::Ordering::Less => {
                            merged.push(ra[i]);
                            i += 1;
                        }
                        std::cmp::Ordering::Greater => {
                            merged.push(rb[j]);
                            j += 1;
                        }
                        std::cmp::Ordering::Equal => return Err(ra[i]),
                    }
                }
                merged.extend_from_slice(&ra[i..]);
                merged.extend_from_slice(&rb[j..]);
                Ok(RankSet::Sorted(merged))
            }
        }
    }
}

pub type TermId = u32;

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Term {
    Leaf { rank: u32, slot: u32 },
    Pair(TermId, TermId),
}

pub struct Terms {
    terms: Vec<Term>,
    /// Input slot all contributions of the term come from.
    pub slot: Vec<u32>,
    /// The ranks whose contributions the term combines.
    pub ranks: Vec<RankSet>,
    index: FxHashMap<Term, TermId>,
    /// Words per bitset, or 0 when rank sets are sorted vectors.
    words: usize,
}

impl Terms {
    /// Terms for a program with `ranks` ranks (processes beyond them, such as switches, never
    /// contribute).
    pub fn new(ranks: u32) -> Terms {
        Terms {
            terms: Vec::new(),
            slot: Vec::new(),
            ranks: Vec::new(),
            index: FxHashMap::default(),
            words: if ranks <= BITSET_RANKS {
                (ranks as usize).div_ceil(64).max(1)
            } else {
                0
            },
        }
    }

    pub fn len(&self) -> usize {
        self.terms.len()
    }

    fn intern(&mut self, t: Term, slot: u32, ranks: impl FnOnce() -> RankSet) -> TermId {
        if let Some(id) = self.index.get(&t) {
            return *id;
        }
        let id = self.terms.len() as TermId;
        self.terms.push(t);
        self.slot.push(slot);
        self.ranks.push(ranks());
        self.index.insert(t, id);
        id
    }

    pub fn leaf(&mut self, rank: u32, slot: u32) -> TermId {
        let words = self.words;
        self.intern(Term::Leaf { rank, slot }, slot, || {
            if words > 0 && (rank as usize) < words * 64 {
                let mut b = vec![0u64; words];
                b[rank as usize / 64] |= 1 << (rank % 64);
                RankSet::Bits(b.into_boxed_slice())
            } else {
                RankSet::Sorted(vec![rank])
            }
        })
    }

    /// Combines two terms; on failure says why.
    pub fn pair(&mut self, a: TermId, b: TermId) -> Result<TermId, String> {
        let (sa, sb) = (self.slot[a as usize], self.slot[b as usize]);
        if sa != sb {
            return Err(format!("combines chunk {sa} with chunk {sb}"));
        }
        let key = Term::Pair(a.min(b), a.max(b));
        if let Some(id) = self.index.get(&key) {
            return Ok(*id);
        }
        let merged = match self.ranks[a as usize].union(&self.ranks[b as usize]) {
            Ok(m) => m,
            Err(r) => {
                return Err(format!(
                    "adds the contribution of rank {r} to chunk {sa} twice"
                ));
            }
        };
        Ok(self.intern(key, sa, || merged))
    }

    /// A short rendering of a term's combination tree, e.g. `((r0 + r1) + r2)`, with the operand
    /// holding the lowest rank first so the rendering is stable.
    pub fn show(&self, t: TermId, budget: &mut usize) -> String {
        if *budget == 0 {
            return "…".into();
        }
        *budget -= 1;
        match self.terms[t as usize] {
            Term::Leaf { rank, .. } => format!("r{rank}"),
            Term::Pair(a, b) => {
                let (a, b) = if self.ranks[a as usize].min() <= self.ranks[b as usize].min() {
                    (a, b)
                } else {
                    (b, a)
                };
                let (x, y) = (self.show(a, budget), self.show(b, budget));
                format!("({x} + {y})")
            }
        }
    }
}
