//! A cache hint for the event loop: [`touch`] asks the CPU to start loading the line holding a
//! value that an upcoming event will read, so that the load overlaps the events before it.
//!
//! On lowered schedules of millions of ranks the loop visits ranks in no useful order, and
//! almost every event waits for main memory to bring in its op's record; the queue knows which
//! events come next ([`super::queue::Events::coming`]), so their records can be on the way. The
//! hint has no effect on results, only on time. It is the x86-64 `prefetcht0` instruction
//! (SSE, part of the baseline) and nothing elsewhere; the intrinsic is an `unsafe fn` although
//! a prefetch cannot fault, so this module alone is allowed unsafe code.

#![allow(unsafe_code)]

/// Hints that `*x` will be read soon.
#[inline(always)]
pub(super) fn touch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetcht0` only hints the cache; it reads nothing and cannot fault, and `x` is
    // a live reference anyway.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>((x as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}
