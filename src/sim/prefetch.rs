//! A hint to the memory that a value will be read soon ([`prefetch`]): the packet simulator
//! asks for the records of the events it will handle next while it handles the one before
//! (`packet::engine`), since a large run spends most of its time waiting for them.
//!
//! This is the one place the library allows `unsafe` (the crate denies it everywhere else):
//! the x86-64 prefetch intrinsic is an `unsafe` function only because it carries a target
//! feature (SSE, which every x86-64 processor has). A prefetch reads nothing and faults on no
//! address, so no value and no result of a run depends on it; other targets get no hint.

/// Hints that `x` (the cache line it starts in) will be read soon.
#[inline]
#[allow(unsafe_code)]
pub fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: `_mm_prefetch` needs SSE, part of the x86-64 baseline; it dereferences
        // nothing (`x` is a live reference anyway) and cannot fault.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(x).cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}
