//! Hash-consed combination terms for the verifier's symbolic execution.
//!
//! A term is a leaf `(rank, input slot)` or an unordered pair of terms: IEEE addition and
//! multiplication are commutative but not associative, so two terms are equal exactly when the
//! computations are bitwise equal. Interning makes equal terms share one id, and every term
//! records the input slot its contributions come from and the sorted ranks it combines, which
//! is what the postcondition needs; building a pair of terms that share a rank is a duplicated
//! contribution.

use rustc_hash::FxHashMap;

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
    /// Sorted ranks whose contributions the term combines.
    pub ranks: Vec<Vec<u32>>,
    index: FxHashMap<Term, TermId>,
}

impl Terms {
    pub fn new() -> Terms {
        Terms {
            terms: Vec::new(),
            slot: Vec::new(),
            ranks: Vec::new(),
            index: FxHashMap::default(),
        }
    }

    pub fn len(&self) -> usize {
        self.terms.len()
    }

    fn intern(&mut self, t: Term, slot: u32, ranks: impl FnOnce() -> Vec<u32>) -> TermId {
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
        self.intern(Term::Leaf { rank, slot }, slot, || vec![rank])
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
        let (ra, rb) = (&self.ranks[a as usize], &self.ranks[b as usize]);
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
                std::cmp::Ordering::Equal => {
                    return Err(format!(
                        "adds the contribution of rank {} to chunk {sa} twice",
                        ra[i]
                    ));
                }
            }
        }
        merged.extend_from_slice(&ra[i..]);
        merged.extend_from_slice(&rb[j..]);
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
                let (a, b) = if self.ranks[a as usize][0] <= self.ranks[b as usize][0] {
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
