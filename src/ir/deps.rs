//! [`Deps`], the dependency list of an IR op, in 16 bytes.
//!
//! Programs of 2^20 ranks hold about 10^8 ops, so the op's size decides whether they fit in
//! memory. Almost every op waits for at most four others (a recursive-multiplying reduction
//! waits for its receive and the three sends that read the slot before it); those lists live in
//! the op itself as four words, unused ones [`EMPTY`]. A longer list, or one holding an id too
//! large to store inline, goes to the heap: the fourth word is then [`HEAP`] and the others hold
//! the allocation's address and length. A `SmallVec<[u32; 4]>` takes 24 bytes for the same
//! (and 8-byte alignment, which rounds the op up to 56 bytes; this keeps it at 44).
//!
//! The heap form is the only unsafe code here: the address of a leaked `Box<[OpId]>` kept as
//! two words (with its provenance exposed) and rebuilt in [`Deps::as_slice`] and on drop. A
//! `Deps` owns that allocation as a `Box` would, which is why it is `Send` and `Sync`. The
//! crate denies unsafe code; this module alone is allowed it.

#![allow(unsafe_code)]

use super::OpId;

/// An unused inline word.
const EMPTY: u32 = u32::MAX;
/// The fourth word of a list held on the heap.
const HEAP: u32 = u32::MAX - 1;

/// The dependencies of an op (see the module doc); dereferences to a slice.
pub struct Deps {
    w: [u32; 4],
}

impl Deps {
    pub const fn new() -> Deps {
        Deps { w: [EMPTY; 4] }
    }

    pub fn from_slice(ids: &[OpId]) -> Deps {
        if ids.len() <= 4 && ids.iter().all(|&d| d < HEAP) {
            let mut w = [EMPTY; 4];
            w[..ids.len()].copy_from_slice(ids);
            return Deps { w };
        }
        let b: Box<[OpId]> = ids.into();
        let len = u32::try_from(b.len()).expect("an op has fewer than 2^32 dependencies");
        let addr = Box::into_raw(b).cast::<OpId>().expose_provenance() as u64;
        Deps {
            w: [addr as u32, (addr >> 32) as u32, len, HEAP],
        }
    }

    fn on_heap(&self) -> bool {
        self.w[3] == HEAP
    }

    /// The heap list's address and length (heap form only).
    fn heap_parts(&self) -> (*mut OpId, usize) {
        let addr = u64::from(self.w[0]) | (u64::from(self.w[1]) << 32);
        (
            std::ptr::with_exposed_provenance_mut::<OpId>(addr as usize),
            self.w[2] as usize,
        )
    }

    pub fn as_slice(&self) -> &[OpId] {
        if self.on_heap() {
            let (ptr, len) = self.heap_parts();
            // SAFETY: in the heap form, `ptr` and `len` come from a `Box<[OpId]>` this value
            // owns (made in `from_slice`, freed only in `drop`), so they name `len` live ids.
            unsafe { std::slice::from_raw_parts(ptr, len) }
        } else {
            let len = self.w.iter().position(|&d| d == EMPTY).unwrap_or(4);
            &self.w[..len]
        }
    }

    /// Appends `d`.
    pub fn push(&mut self, d: OpId) {
        let len = self.as_slice().len();
        if !self.on_heap() && len < 4 && d < HEAP {
            self.w[len] = d;
            return;
        }
        let mut all = Vec::with_capacity(len + 1);
        all.extend_from_slice(self.as_slice());
        all.push(d);
        *self = Deps::from_slice(&all);
    }
}

impl Drop for Deps {
    fn drop(&mut self) {
        if self.on_heap() {
            let (ptr, len) = self.heap_parts();
            // SAFETY: the heap form owns this `Box<[OpId]>` (see `as_slice`); it is rebuilt
            // and freed exactly once, here.
            drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len)) });
        }
    }
}

impl Default for Deps {
    fn default() -> Deps {
        Deps::new()
    }
}

impl Clone for Deps {
    fn clone(&self) -> Deps {
        Deps::from_slice(self.as_slice())
    }
}

impl std::ops::Deref for Deps {
    type Target = [OpId];
    fn deref(&self) -> &[OpId] {
        self.as_slice()
    }
}

impl PartialEq for Deps {
    fn eq(&self, other: &Deps) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for Deps {}

impl std::fmt::Debug for Deps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl<'a> IntoIterator for &'a Deps {
    type Item = &'a OpId;
    type IntoIter = std::slice::Iter<'a, OpId>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl FromIterator<OpId> for Deps {
    fn from_iter<I: IntoIterator<Item = OpId>>(it: I) -> Deps {
        let mut w = [EMPTY; 4];
        let mut it = it.into_iter();
        for len in 0.. {
            let Some(x) = it.next() else { break };
            if len == 4 || x >= HEAP {
                let mut all = w[..len].to_vec();
                all.push(x);
                all.extend(it);
                return Deps::from_slice(&all);
            }
            w[len] = x;
        }
        Deps { w }
    }
}

impl From<&[OpId]> for Deps {
    fn from(ids: &[OpId]) -> Deps {
        Deps::from_slice(ids)
    }
}

impl From<Vec<OpId>> for Deps {
    fn from(ids: Vec<OpId>) -> Deps {
        Deps::from_slice(&ids)
    }
}

impl<const N: usize> From<[OpId; N]> for Deps {
    fn from(ids: [OpId; N]) -> Deps {
        Deps::from_slice(&ids)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_lists_stay_inline_and_long_or_large_ones_round_trip_through_the_heap() {
        assert_eq!(std::mem::size_of::<Deps>(), 16);
        assert_eq!(std::mem::size_of::<super::super::Op>(), 44);
        for len in 0..12u32 {
            let ids: Vec<OpId> = (0..len).map(|i| i * 7 + 1).collect();
            let d = Deps::from_slice(&ids);
            assert_eq!(d.on_heap(), len > 4);
            assert_eq!(&*d, &ids[..]);
            let c = d.clone();
            drop(d);
            assert_eq!(&*c, &ids[..]);
            let mut p = Deps::new();
            ids.iter().for_each(|&x| p.push(x));
            assert_eq!(p, c);
            assert_eq!(ids.iter().copied().collect::<Deps>(), c);
        }
        // Ids that collide with the markers go to the heap rather than being misread.
        for big in [EMPTY, HEAP, 0] {
            let d = Deps::from_slice(&[3, big]);
            assert_eq!(&*d, &[3, big]);
            let mut p = Deps::from_slice(&[3]);
            p.push(big);
            assert_eq!(&*p, &[3, big]);
            assert_eq!([3, big].into_iter().collect::<Deps>(), d);
        }
        assert_eq!(format!("{:?}", Deps::from([1, 2])), "[1, 2]");
        assert!(Deps::default().is_empty());
    }
}
