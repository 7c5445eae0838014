//! Randomness and background traffic for the packet simulator.
//!
//! [`Rng`] is splitmix64: tiny, seeded, and the same sequence on every machine, so a run is a
//! function of its seed. [`place`] puts a collective's ranks on a random subset of the compute
//! nodes (the paper allocates the allreduce's hosts at random in each of its five runs) and
//! [`congesting`] picks the hosts that generate background traffic among the others.
//!
//! Background traffic is the paper's random uniform injection (Section 5.2): each congesting
//! host sends a message of `background_size` bytes to a peer drawn uniformly among the *other
//! congesting hosts*, and draws a new peer for each next message, which it posts (after the host
//! overhead) as soon as the last packet of the previous one has left its NIC, so every congesting
//! host injects at line rate whenever the network lets it, and receives from changing senders.
//! By default peers are drawn among the congesting hosts, not all hosts, so the background is a
//! separate application sharing the network rather than traffic aimed at the collective's hosts;
//! `background_peers: all` draws them among all other compute nodes, so the collective's host
//! links carry background traffic too (the paper does not say which it used). The traffic runs
//! until the last collective finishes.

/// splitmix64 (Steele, Lea and Flood), seeded.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1), from the top 53 bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `0..n` (n > 0), by rejection so there is no modulo bias.
    pub fn below(&mut self, n: u64) -> u64 {
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let x = self.next_u64();
            if x < zone {
                return x % n;
            }
        }
    }

    /// Fisher-Yates shuffle.
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
    }
}

/// `n` hosts drawn at random (without repetition) from `hosts`, in the order drawn; the rest
/// follow in random order.
pub fn place(hosts: &[u32], rng: &mut Rng) -> Vec<u32> {
    let mut v = hosts.to_vec();
    rng.shuffle(&mut v);
    v
}

/// The congesting hosts: the first `count` of `free` after a shuffle, sorted.
pub fn congesting(free: &[u32], count: usize, rng: &mut Rng) -> Vec<u32> {
    let mut v = free.to_vec();
    rng.shuffle(&mut v);
    v.truncate(count);
    v.sort_unstable();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rng_is_seeded_and_uniform_enough() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        let xs: Vec<u64> = (0..5).map(|_| a.next_u64()).collect();
        let ys: Vec<u64> = (0..5).map(|_| b.next_u64()).collect();
        assert_eq!(xs, ys);
        assert_ne!(Rng::new(8).next_u64(), xs[0]);
        let mut r = Rng::new(1);
        let mut hist = [0u32; 4];
        for _ in 0..4000 {
            hist[r.below(4) as usize] += 1;
        }
        assert!(hist.iter().all(|&h| (900..1100).contains(&h)), "{hist:?}");
    }

    #[test]
    fn placement_is_a_permutation() {
        let hosts: Vec<u32> = (10..30).collect();
        let p = place(&hosts, &mut Rng::new(3));
        let mut s = p.clone();
        s.sort_unstable();
        assert_eq!(s, hosts);
        assert_ne!(p, hosts);
        let c = congesting(&hosts, 5, &mut Rng::new(3));
        assert_eq!(c.len(), 5);
        assert!(c.windows(2).all(|w| w[0] < w[1]));
    }
}
