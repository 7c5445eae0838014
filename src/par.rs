//! Data parallelism over the machine's cores with scoped threads (no pool, no dependency): the
//! verifier and the GOAL backend split per-process work of programs with millions of ops.
//!
//! Work is cut into blocks of consecutive items that threads claim one at a time (so a core
//! busy with something else slows its thread, not the whole job), and results come back in
//! block order: the output never depends on the number of threads or on timing. Small jobs
//! (one block) and `COLLC_THREADS=1` run on the calling thread.

use std::ops::Range;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Threads to use: `COLLC_THREADS` if set (at least 1), otherwise the available parallelism,
/// at most 8.
pub fn threads() -> usize {
    static N: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *N.get_or_init(|| {
        std::env::var("COLLC_THREADS")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .map(|n| n.max(1))
            .unwrap_or_else(|| {
                std::thread::available_parallelism()
                    .map(|n| n.get())
                    .unwrap_or(1)
                    .min(8)
            })
    })
}

/// Block size for `n` items: about eight blocks per thread, at least `min` items each.
pub fn block_size(n: usize, min: usize) -> usize {
    n.div_ceil(threads() * 8).max(min).max(1)
}

/// `f` over `0..n` cut into blocks of `block` items, on up to [`threads`] threads; the results
/// in block order.
pub fn map_blocks<T: Send>(n: usize, block: usize, f: impl Fn(Range<usize>) -> T + Sync) -> Vec<T> {
    let block = block.max(1);
    let blocks = n.div_ceil(block);
    let range = |b: usize| b * block..((b + 1) * block).min(n);
    let workers = threads().min(blocks);
    if workers <= 1 {
        return (0..blocks).map(|b| f(range(b))).collect();
    }
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let b = next.fetch_add(1, Ordering::Relaxed);
            if b >= blocks {
                return done;
            }
            done.push((b, f(range(b))));
        }
    };
    let mut parts: Vec<(usize, T)> = std::thread::scope(|s| {
        let handles: Vec<_> = (1..workers).map(|_| s.spawn(work)).collect();
        let mut all = work();
        for h in handles {
            match h.join() {
                Ok(v) => all.extend(v),
                Err(e) => std::panic::resume_unwind(e),
            }
        }
        all
    });
    parts.sort_unstable_by_key(|x| x.0);
    parts.into_iter().map(|x| x.1).collect()
}

/// Runs `f(first index, block)` on consecutive blocks of `items` of `block` items each, on up to
/// [`threads`] threads.
pub fn for_blocks_mut<T: Send>(items: &mut [T], block: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    let block = block.max(1);
    let workers = threads().min(items.len().div_ceil(block));
    if workers <= 1 {
        for (b, c) in items.chunks_mut(block).enumerate() {
            f(b * block, c);
        }
        return;
    }
    let queue = Mutex::new(items.chunks_mut(block).enumerate());
    let work = || {
        loop {
            let next = match queue.lock() {
                Ok(mut q) => q.next(),
                Err(p) => p.into_inner().next(),
            };
            let Some((b, c)) = next else { return };
            f(b * block, c);
        }
    };
    std::thread::scope(|s| {
        let handles: Vec<_> = (1..workers).map(|_| s.spawn(work)).collect();
        work();
        for h in handles {
            if let Err(e) = h.join() {
                std::panic::resume_unwind(e);
            }
        }
    });
}

/// Runs `a` and `b`, on two threads when there are.
pub fn join<A: Send, B: Send>(
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    if threads() <= 1 {
        return (a(), b());
    }
    std::thread::scope(|s| {
        let h = s.spawn(a);
        let rb = b();
        match h.join() {
            Ok(ra) => (ra, rb),
            Err(e) => std::panic::resume_unwind(e),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_block_order() {
        let v = map_blocks(1000, 7, |r| r.clone().sum::<usize>());
        assert_eq!(v.len(), 1000usize.div_ceil(7));
        assert_eq!(v.iter().sum::<usize>(), (0..1000).sum::<usize>());
        assert_eq!(v[0], (0..7).sum::<usize>());
        assert_eq!(v[v.len() - 1], (994..1000).sum::<usize>());
        let mut items = vec![0usize; 1000];
        for_blocks_mut(&mut items, 13, |at, c| {
            for (i, x) in c.iter_mut().enumerate() {
                *x = at + i;
            }
        });
        assert!(items.iter().enumerate().all(|(i, x)| i == *x));
        assert!(map_blocks(0, 5, |r| r.len()).is_empty());
    }
}
