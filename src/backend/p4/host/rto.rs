//! A host's retransmission timeout. With `retransmit: auto` it is estimated as TCP's
//! (RFC 6298, Section 2), per host, by the rules collc's packet simulator runs
//! (src/sim/packet/canary_faults.rs), so the hosts deployed are the hosts simulated:
//!
//! - each block's round trip, from sending its packet to its result coming down the tree, is
//!   a sample, unless the block's timer fired in its generation (Karn's rule: such a result
//!   cannot be matched to one send; the generation in a result's id tells re-sent generations
//!   apart);
//! - the timeout is SRTT + 4 RTTVAR (gains 1/8 and 1/4), never below the value collc planned
//!   (2 RTT on the declared network, Section 6 of the paper), which is also the timeout before
//!   the first sample;
//! - each time a block's timer fires, that block's next timeout doubles, up to 2^6 times:
//!   exponential back-off per block; a new generation starts again from the host's timeout.
//!
//! A timeout the schedule or the target gives (`retransmit: 300 us`) is used as written,
//! fixed, without estimation or back-off.

use std::time::Duration;

/// Times a block's timer doubles at most (2^6 = 64 times its host's timeout).
pub const MAX_BACKOFF: u32 = 6;

/// One host's retransmission timeout, in nanoseconds.
#[derive(Debug, Clone, Copy)]
pub struct Rto {
    adaptive: bool,
    srtt: u64,
    rttvar: u64,
    rto: u64,
    floor: u64,
    /// Round trips sampled.
    pub samples: u64,
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Rto {
    /// The timeout `planned` (collc's value), estimated from there when `adaptive`, else fixed.
    pub fn new(planned: Duration, adaptive: bool) -> Rto {
        let floor = nanos(planned);
        Rto {
            adaptive,
            srtt: 0,
            rttvar: 0,
            rto: floor,
            floor,
            samples: 0,
        }
    }

    /// A measured round trip: RFC 6298's update (alpha 1/8, beta 1/4, K = 4), above the floor.
    /// A fixed timeout takes no samples.
    pub fn sample(&mut self, rtt: Duration) {
        if !self.adaptive {
            return;
        }
        let rtt = nanos(rtt);
        if self.samples > 0 {
            self.rttvar = (3 * self.rttvar + self.srtt.abs_diff(rtt)) / 4;
            self.srtt = (7 * self.srtt + rtt) / 8;
        } else {
            self.srtt = rtt;
            self.rttvar = rtt / 2;
        }
        self.samples += 1;
        self.rto = self
            .srtt
            .saturating_add(self.rttvar.saturating_mul(4))
            .max(self.floor);
    }

    /// The host's current timeout.
    pub fn timeout(&self) -> Duration {
        Duration::from_nanos(self.rto)
    }

    /// How long a block waits for its result when its timer has fired `fired` times in its
    /// generation: the timeout doubled that often (adaptive), or the fixed timeout.
    pub fn wait(&self, fired: u32) -> Duration {
        if self.adaptive {
            Duration::from_nanos(self.rto.saturating_mul(1 << fired.min(MAX_BACKOFF)))
        } else {
            Duration::from_nanos(self.rto)
        }
    }

    /// The timeout as the program reports it: `28 us (fixed)`, or with the estimate behind it.
    pub fn describe(&self) -> String {
        if !self.adaptive {
            return format!("{:?} (fixed)", self.timeout());
        }
        format!(
            "{:?} (auto from {:?}: {} round trips sampled, srtt {:?}, rttvar {:?})",
            self.timeout(),
            Duration::from_nanos(self.floor),
            self.samples,
            Duration::from_nanos(self.srtt),
            Duration::from_nanos(self.rttvar)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NS: fn(u64) -> Duration = Duration::from_nanos;

    #[test]
    fn the_timeout_follows_rfc_6298_above_its_floor() {
        let mut r = Rto::new(NS(30), true);
        assert_eq!(r.timeout(), NS(30), "before any sample: the planned value");
        r.sample(NS(100));
        // First sample: SRTT = R, RTTVAR = R/2, RTO = SRTT + 4 RTTVAR.
        assert_eq!((r.srtt, r.rttvar, r.timeout()), (100, 50, NS(300)));
        r.sample(NS(100));
        // RTTVAR = 3/4 x 50 + 1/4 x 0, SRTT unchanged: the simulator's figures.
        assert_eq!((r.srtt, r.rttvar, r.timeout()), (100, 37, NS(248)));
        for _ in 0..200 {
            r.sample(NS(4));
        }
        assert_eq!(r.timeout(), NS(30), "never below the planned value");
        for _ in 0..200 {
            r.sample(NS(1_000));
        }
        assert!((NS(1_000)..NS(1_100)).contains(&r.timeout()), "{r:?}");
        assert_eq!(r.samples, 402);
    }

    #[test]
    fn a_block_backs_off_and_a_fixed_timeout_stays() {
        let r = Rto::new(NS(30), true);
        assert_eq!(r.wait(0), NS(30));
        assert_eq!(r.wait(2), NS(120));
        assert_eq!(r.wait(9), NS(30 << MAX_BACKOFF), "at most 64 times");
        let mut fixed = Rto::new(NS(300), false);
        fixed.sample(NS(5_000));
        assert_eq!(
            (fixed.wait(0), fixed.wait(3), fixed.samples),
            (NS(300), NS(300), 0)
        );
        assert!(fixed.describe().ends_with("(fixed)"));
        assert!(
            r.describe()
                .contains("auto from 30ns: 0 round trips sampled")
        );
    }
}
