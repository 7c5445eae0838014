//! Canary workers' loss detection in the packet engine ([`Workers`]): when a worker asks a
//! block's leader for its result (Section 3.3). Leaders find lost contributions themselves
//! ([`super::canary_leader`]), so a worker asks only for results that did not come down the
//! tree (or a failure notice it never got), as a host stack decides a segment is lost:
//!
//! - **RACK per lane** (RFC 8985): the results of one leader's blocks come down the same
//!   paths in the order the blocks went up, so when a result arrives, every block of the same
//!   lane this worker sent before it and still misses is lost once it has been outstanding
//!   that result's round trip plus a reordering window (a quarter of the least round trip,
//!   times a multiplier that grows when a result asked for comes down the tree after all and
//!   returns to 1 after 16 asks without that). A lane is a leader and a class: first
//!   generations, or re-issued ones, which travel in the switches' priority class and
//!   overtake first generations. Results of different leaders take different paths (one
//!   crosses the core twice, another once) and are not compared.
//! - **One timer per worker**, as a TCP sender has one (RFC 6298, Section 5): armed while
//!   blocks are outstanding, restarted by every result. When nothing came for a whole
//!   timeout, the worker asks for every block it sent at least that long ago; one it already
//!   asked for waits twice as long as before each time (up to 64 times), so a deep queue
//!   of late results cannot turn into a storm of requests and answers. The timeout is the
//!   declared `retransmit` (then without back-off), or with `auto` the block lifetime on the
//!   idle network, 2d(l + t) + r (Section 3.2.2): a silence that long while this worker's
//!   blocks are in flight says what is missing is lost. A timer per block from its send (the
//!   paper's) fires on results that are only queued, once the queues at the bottleneck grow
//!   through the streams, and one from the RTO estimate (SRTT + 4 RTTVAR) waited tens of
//!   microseconds of tail for the last results (1 MiB at 1% loss on
//!   examples/canary_small.coll: a median of 277 us against 236 us over seeds 1-7).
//!
//! With contributor recovery ([`crate::sema::model::Recovery`]) the silence, and the wait
//! before a request is asked again, is one block lifetime without back-off (a result lost
//! high in a tree is answered by one flood, so an early request costs a header), not up to
//! 64 times that:
//! on the paper's 1,024 hosts at 1% loss the workers' last requests waited up to 56 us of
//! back-off after 14 us answers were lost twice (seed 2: 333 us, now 231 us). One more
//! rule there, **the silence of the trees** (and one for every recovery, the tail):
//!
//! - **The silence of the trees.** Once a worker's stream has ended, a silence of the
//!   results that come down the trees (answers and floods do not break it) asks for the
//!   blocks it has not asked for yet. At 1 MiB each of the 1,024 leaders leads one block,
//!   so RACK per lane never fires, and answers to other workers' requests kept restarting
//!   the silence: a result lost for every worker at the top of its tree (seed 2) was asked
//!   for at 185 us, 57 us after its block was done. While the stream runs the trees' results
//!   can queue behind answers at the worker's link, and asking on their silence then
//!   (4 MiB, seed 1) asked 89,000 times against 51,000 and took 734 us against 602 us.
//! - **The tail** (with `retransmit: auto`, under either recovery). Once every block the
//!   worker misses has a request out, a request is asked again an idle round trip of a
//!   request and its answer after it left the host
//!   ([`crate::cost::canary::Figures::direct`]), plus twice an answer's time on the host's
//!   link for each request it has out (their answers come in line), instead of after a
//!   (backed-off) silence of a whole lifetime. With the paper's recovery on
//!   examples/canary_small.coll at 1 MiB, seed 2, a block that fell back took its last
//!   answer 30 us after the first was lost (234 us, now 171 us; seeds 1-24 at most 194 us
//!   against 106.5 us lossless, with the fallback's direct clock of
//!   [`super::canary_leader`]). An RTO from the workers' request round trips does not
//!   serve: a request for a block still underway is answered only when it is done, and
//!   asking again on that estimate sent 140,000 requests against 39,000 (356 us against
//!   202 us at 1 MiB, seed 1).
//!
//! Round trips are sampled from results that came down the tree for the generation the
//! worker last sent and that it did not ask for (Karn's rule); they set the window (their
//! SRTT caps it).

use super::canary_faults::{MAX_BACKOFF, Rto};
use super::engine::Sim;
use crate::canary::host::Plan;
use crate::canary::protocol::Kind;
use crate::canary::switch::Header;
use std::collections::BTreeSet;

/// Asks by RACK without a spurious one before the window multiplier returns to 1.
const PERSIST: u32 = 16;

/// One worker's state.
#[derive(Default)]
struct Worker {
    /// Blocks sent and not yet resolved, by (when the timer may ask for it, block), and by
    /// (leader, send, block).
    outstanding: BTreeSet<(u64, u32)>,
    by_leader: BTreeSet<(u32, u64, u32)>,
    /// Requests out of the host and not answered, by (when the last one left, block), and
    /// by (when the tail may ask again, block).
    asking: BTreeSet<(u64, u32)>,
    tail: BTreeSet<(u64, u32)>,
    /// When the timer is due (u64::MAX: not armed); when a silence ends, of every result
    /// and (with contributor recovery, where answers do not break it) of the trees' results.
    timer: u64,
    silent: u64,
    trees: u64,
    /// Blocks its stream has yet to send (the silence of the trees counts once it ended:
    /// while it runs, answers to requests can hold the trees' results back at its link).
    unsent: u32,
    rtt: Option<Rto>,
    min_rtt: u64,
    mult: u64,
    persist: u32,
}

/// The workers' state of one Canary allreduce where faults are on.
pub(super) struct Workers {
    blocks: u32,
    /// Per (rank, block) at `rank x blocks + block`: when it last sent the block (u64::MAX:
    /// never), when it last asked for that generation's result (u64::MAX: not yet), and how
    /// often.
    sent_at: Vec<u64>,
    /// Per (rank, block): whether the rank sent it (or its stream passed it) at all.
    sent_any: Vec<bool>,
    asked: Vec<u64>,
    asks: Vec<u8>,
    /// When its last request left the host (u64::MAX: none out), and when the tail may ask
    /// again.
    out: Vec<u64>,
    again: Vec<u64>,
    /// The idle round trip of a request and its answer, one answer's time on a host's link,
    /// and the worker's silence (ps): the tail's wait and its cap; and the asks of one block
    /// before it backs off. None with a declared `retransmit`.
    tail: Option<(u64, u64, u64, u8)>,
    /// Its key in `outstanding`: when the timer may ask for it (u64::MAX: not outstanding).
    due: Vec<u64>,
    worker: Vec<Worker>,
    /// Blocks asked for by RACK and by the timer, and asks found spurious.
    pub(super) by_rack: u64,
    pub(super) by_timer: u64,
    pub(super) spurious: u64,
}

impl Workers {
    pub(super) fn new(plan: &Plan) -> Workers {
        let n = (u64::from(plan.ranks()) * u64::from(plan.blocks)) as usize;
        let mut unsent = vec![plan.blocks; plan.ranks() as usize];
        for b in 0..plan.blocks {
            unsent[plan.leader(b) as usize] -= 1;
        }
        Workers {
            blocks: plan.blocks,
            sent_at: vec![u64::MAX; n],
            sent_any: vec![false; n],
            asked: vec![u64::MAX; n],
            asks: vec![0; n],
            out: vec![u64::MAX; n],
            again: vec![u64::MAX; n],
            tail: None,
            due: vec![u64::MAX; n],
            worker: unsent
                .into_iter()
                .map(|unsent| Worker {
                    unsent,
                    timer: u64::MAX,
                    silent: u64::MAX,
                    trees: u64::MAX,
                    min_rtt: u64::MAX,
                    mult: 1,
                    ..Worker::default()
                })
                .collect(),
            by_rack: 0,
            by_timer: 0,
            spurious: 0,
        }
    }

    fn at(&self, r: u32, b: u32) -> usize {
        (u64::from(r) * u64::from(self.blocks) + u64::from(b)) as usize
    }

    /// Rank `r` asks for block `b` at `now`: a request it had out is superseded, and the
    /// timer may ask again after the (backed-off) wait `waits[asks]`.
    fn ask(&mut self, r: u32, b: u32, now: u64, waits: &[u64]) {
        let k = self.at(r, b);
        self.asked[k] = now;
        self.asks[k] = self.asks[k].saturating_add(1);
        self.answered(r, b);
        let w = &mut self.worker[r as usize];
        let due = now.saturating_add(waits[usize::from(self.asks[k].min(MAX_BACKOFF))]);
        if w.outstanding.remove(&(self.due[k], b)) {
            self.due[k] = due;
            w.outstanding.insert((due, b));
        }
    }

    /// The tail's wait: `direct` the idle round trip of a request and its answer, `answer`
    /// an answer's time on a host's link (ps), doubled per ask of the same block up to `cap`,
    /// the worker's silence, once the asks fail more often than `loss` per link explains (the
    /// answer of a block still underway waits until it is done): after m failed rounds, where
    /// a request and its answer cross 2d links (d the diameter), lost with q, and the ranks x
    /// blocks requests expect fewer than one q^m.
    pub(super) fn set_tail(&mut self, direct: u64, answer: u64, cap: u64, loss: f64, d: u64) {
        let links = u32::try_from(d.saturating_mul(2)).unwrap_or(u32::MAX);
        let q = 1.0 - crate::sema::model::Recovery::own_links(loss, links);
        let pairs = (self.sent_at.len() as f64).max(1.0);
        let free = if q <= 0.0 || q >= 1.0 {
            0
        } else {
            (pairs.ln() / (1.0 / q).ln()).ceil().clamp(0.0, 64.0) as u8
        };
        self.tail = Some((direct, answer, cap, free));
    }

    /// Rank `r` sends block `b` (or its stream passes it, the result in): whether that ends
    /// its stream.
    fn passed(&mut self, r: u32, b: u32) -> bool {
        let k = self.at(r, b);
        if self.sent_any[k] {
            return false;
        }
        self.sent_any[k] = true;
        let w = &mut self.worker[r as usize];
        w.unsent = w.unsent.saturating_sub(1);
        w.unsent == 0 && w.timer != u64::MAX
    }

    /// Rank `r`'s request for block `b` is no longer out (answered, superseded by a new ask,
    /// or the block sent again): when it left.
    fn answered(&mut self, r: u32, b: u32) -> u64 {
        let k = self.at(r, b);
        let out = std::mem::replace(&mut self.out[k], u64::MAX);
        let again = std::mem::replace(&mut self.again[k], u64::MAX);
        let w = &mut self.worker[r as usize];
        w.asking.remove(&(out, b));
        w.tail.remove(&(again, b));
        out
    }

    /// With the tail on (`retransmit: auto`, either recovery), once every block rank `r`
    /// misses has a request out (no result is due down a tree any more), when the first of
    /// them may be asked again.
    fn tail_due(&self, r: u32) -> Option<u64> {
        let w = &self.worker[r as usize];
        if self.tail.is_none() || w.asking.is_empty() || w.asking.len() < w.outstanding.len() {
            return None;
        }
        w.tail.first().map(|&(d, _)| d)
    }

    /// Worker `r`'s reordering window.
    fn window(&self, r: u32) -> u64 {
        let w = &self.worker[r as usize];
        if w.min_rtt == u64::MAX {
            return 0;
        }
        let cap = w.rtt.map_or(0, |x| x.srtt).max(w.min_rtt / 4);
        (w.min_rtt / 4).saturating_mul(w.mult).min(cap)
    }
}

impl Sim<'_> {
    fn workers(&mut self, c: u32) -> Option<&mut Workers> {
        self.canary[c as usize].workers.as_mut()
    }

    /// Rank `r` of job `c` sends its contribution to block `b`: the block is outstanding
    /// from now, and the rank's timer runs if it did not.
    pub(super) fn worker_sent(&mut self, c: u32, r: u32, b: u32) {
        let ended = self.workers(c).is_some_and(|ws| ws.passed(r, b));
        if ended {
            // Its stream ended: the silence of the trees counts from now on.
            self.arm_worker(c, r, false, false);
        }
        if self.canary[c as usize].has(r, b) {
            // Its stream reached a block whose re-issued generation already came back.
            return;
        }
        let now = self.now;
        let lane = self.lane(c, r, b);
        let due = now.saturating_add(self.worker_wait(c, 0));
        let Some(ws) = self.workers(c) else {
            return;
        };
        let k = ws.at(r, b);
        let old = std::mem::replace(&mut ws.sent_at[k], now);
        let was = std::mem::replace(&mut ws.due[k], due);
        ws.asked[k] = u64::MAX;
        ws.asks[k] = 0;
        ws.answered(r, b);
        let w = &mut ws.worker[r as usize];
        if w.outstanding.remove(&(was, b)) {
            // Its lane before this send: the same leader, either class.
            w.by_leader.remove(&(lane & !1, old, b));
            w.by_leader.remove(&(lane | 1, old, b));
        }
        w.outstanding.insert((due, b));
        w.by_leader.insert((lane, now, b));
        if w.timer == u64::MAX {
            self.arm_worker(c, r, true, true);
        }
    }

    /// The lane of rank `r`'s block `b` in job `c` for RACK: its leader, and whether the
    /// generation it sent is a re-issued one (those travel in the priority class,
    /// [`super::canary_leader`], and overtake first generations).
    fn lane(&self, c: u32, r: u32, b: u32) -> u32 {
        let g = self.canary[c as usize].sent_gen(r, b);
        2 * self.cjobs[c as usize].plan.leader(b) + u32::from(g > 0)
    }

    /// How long a worker of job `c` waits for a block's result, from its send or its last
    /// ask, before it asks (again), having asked `asks` times: the declared timeout, or with
    /// `auto` the block lifetime (half the `auto` retransmission timeout, which is 2 RTT of
    /// it), doubled per ask already made. With no ask, also its timer's silence.
    fn worker_wait(&self, c: u32, asks: u8) -> u64 {
        let job = &self.cjobs[c as usize];
        if !job.adaptive {
            return job.retransmit;
        }
        // With contributor recovery one block lifetime, without back-off: results that came
        // down the tree were lost high in it for many workers at once, and their leader
        // answers them with one flood ([`super::canary_faults`]); a request is a header and
        // its answer one packet.
        if job.plan.contributors {
            return job.retransmit / 2;
        }
        (job.retransmit / 2) << asks.min(MAX_BACKOFF)
    }

    /// Arms rank `r`'s timer for the end of a silence, restarting that of every result
    /// (`any`) and that of the trees' results (`tree`) from now, or for the tail's next ask.
    fn arm_worker(&mut self, c: u32, r: u32, any: bool, tree: bool) {
        let now = self.now;
        let silence = now.saturating_add(self.worker_wait(c, 0));
        let Some(ws) = self.workers(c) else {
            return;
        };
        let tail = ws.tail_due(r);
        let w = &mut ws.worker[r as usize];
        if any || w.silent == u64::MAX {
            w.silent = silence;
        }
        if tree || w.trees == u64::MAX {
            w.trees = silence;
        }
        let quiet = if w.unsent == 0 {
            w.silent.min(w.trees)
        } else {
            w.silent
        };
        // A silence of the trees may have ended while the stream still ran: now, then.
        let at = tail.map_or(quiet, |d| quiet.min(d)).max(now);
        w.timer = at;
        self.canary_live += 1;
        self.push_retry(c, r, at);
    }

    /// Packet `h` reached host `at` after `busy` ps on its link: with contributor recovery,
    /// time the link spent on anything but the trees' results (or on anything but results)
    /// is no silence of them (or of every result): they may wait behind it at the switch.
    /// A leader's direct round brings up to a lifetime of contributions down its link, and
    /// the worker on that host, hearing no result meanwhile, asked for hundreds of blocks
    /// whose answers held its results back further (1 MiB on the paper's 1,024 hosts,
    /// seed 4: one host's results 40 us late, and the run 2.007 times its lossless time).
    pub(super) fn worker_link(&mut self, at: u32, h: &Header, busy: u64) {
        let c = Plan::app_of(h.id) as usize;
        if !self
            .cjobs
            .get(c)
            .is_some_and(|j| j.faults && j.plan.contributors)
        {
            return;
        }
        let st = &mut self.canary[c];
        let (Some(&r), Some(ws)) = (st.rank_of.get(&at), st.workers.as_mut()) else {
            return;
        };
        let result = h.kind == Kind::Data && h.multicast;
        let tree_result = result && !h.bypass;
        let w = &mut ws.worker[r as usize];
        if !tree_result && w.trees != u64::MAX {
            w.trees = w.trees.saturating_add(busy);
        }
        if !result && w.silent != u64::MAX {
            w.silent = w.silent.saturating_add(busy);
        }
    }

    /// Block `b`'s result `h` reached rank `r` of job `c` (before it is recorded): a sample,
    /// RACK's rule for the same leader's older blocks, and progress for the timer.
    pub(super) fn worker_result(&mut self, c: u32, r: u32, b: u32, h: &Header) {
        let g = self.cjobs[c as usize].plan.gen_of(h.id);
        let leader = self.lane(c, r, b);
        let now = self.now;
        let waits: [u64; MAX_BACKOFF as usize + 1] =
            std::array::from_fn(|n| self.worker_wait(c, n as u8));
        let st = &mut self.canary[c as usize];
        let sent_gen = st.sent_gen(r, b);
        let held = st.has(r, b);
        let Some(ws) = st.workers.as_mut() else {
            return;
        };
        let k = ws.at(r, b);
        let s = ws.sent_at[k];
        // A result down the tree for the generation this worker sent.
        let tree = !h.bypass && g == sent_gen && s != u64::MAX;
        let w = &mut ws.worker[r as usize];
        if tree && ws.asked[k] != u64::MAX {
            // It was only late: the window grows.
            ws.spurious += 1;
            w.mult = (w.mult + 1).min(64);
            w.persist = 0;
        }
        let out = ws.answered(r, b);
        let due = ws.due[k];
        let w = &mut ws.worker[r as usize];
        if held || !w.outstanding.remove(&(due, b)) {
            return;
        }
        ws.due[k] = u64::MAX;
        let w = &mut ws.worker[r as usize];
        w.by_leader.remove(&(leader, s, b));
        let mut asks = Vec::new();
        if h.bypass && out != u64::MAX {
            // An answer: requests that left before this one and are still unanswered are
            // lost by RACK's rule, with this answer's round trip.
            // Left at t2 with t2 + (now - out) + window <= now: t2 <= out - window. Each
            // is asked again and leaves the set, so the scan costs what it finds.
            let last = out.saturating_sub(ws.window(r));
            let w = &ws.worker[r as usize];
            // With contributor recovery only requests to the same leader: one leader's
            // answers come in the order it was asked, different leaders' do not.
            let plan = &self.cjobs[c as usize].plan;
            let same = |b2: u32| !plan.contributors || plan.leader(b2) == plan.leader(b);
            asks.extend(
                w.asking
                    .range(..(last, u32::MAX))
                    .map(|&(_, b2)| b2)
                    .filter(|&b2| same(b2)),
            );
        }
        let ws = self.canary[c as usize].workers.as_mut().expect("workers");
        if tree && ws.asked[k] == u64::MAX {
            let rtt = now - s;
            let w = &mut ws.worker[r as usize];
            w.rtt.get_or_insert(Rto::new(0)).sample(rtt);
            w.min_rtt = w.min_rtt.min(rtt);
            let reo = ws.window(r);
            let w = &ws.worker[r as usize];
            for &(_, s2, b2) in w.by_leader.range((leader, 0, 0)..(leader, s, 0)) {
                let k2 = ws.at(r, b2);
                if ws.asked[k2] == u64::MAX && s2.saturating_add(rtt).saturating_add(reo) <= now {
                    asks.push(b2);
                }
            }
        }
        let w = &mut ws.worker[r as usize];
        w.timer = u64::MAX;
        let rearm = !w.outstanding.is_empty();
        ws.by_rack += asks.len() as u64;
        for &b2 in &asks {
            ws.ask(r, b2, now, &waits);
            let w = &mut ws.worker[r as usize];
            w.persist += 1;
            if w.persist >= PERSIST {
                w.mult = 1;
                w.persist = 0;
            }
        }
        for b2 in asks {
            self.canary_ask(c, r, b2);
        }
        if rearm {
            // With contributor recovery an answer (or a flood) is no result of the trees:
            // the silence that says results stopped coming down them runs on.
            let tree = !h.bypass || !self.cjobs[c as usize].plan.contributors;
            self.arm_worker(c, r, true, tree);
        }
    }

    /// Rank `r`'s timer for `at` fired (unless restarted since): no result came for a whole
    /// timeout, so the rank asks for every block it sent that long ago and still misses
    /// (unless it asked for it within its backed-off wait).
    pub(super) fn canary_retry(&mut self, c: u32, r: u32, at: u64) {
        self.canary_live -= 1;
        let waits: [u64; MAX_BACKOFF as usize + 1] =
            std::array::from_fn(|n| self.worker_wait(c, n as u8));
        let now = self.now;
        let Some(ws) = self.workers(c) else {
            return;
        };
        let w = &mut ws.worker[r as usize];
        if w.timer != at {
            return;
        }
        w.timer = u64::MAX;
        let (silence, trees) = (w.silent <= now, w.unsent == 0 && w.trees <= now);
        // Blocks sent a timeout ago and not asked for, or asked for longer ago than their
        // (backed-off) wait: the front of `outstanding`.
        // In the tail, also requests out longer than a request's round trip, with the
        // answers to this worker's requests in line at its link.
        let tail = ws.tail_due(r).is_some();
        let w = &ws.worker[r as usize];
        // After a silence of the trees alone, only blocks not asked for yet: their results
        // stopped coming down the trees, while answers to requests still come.
        let mut asks: Vec<u32> = w
            .outstanding
            .iter()
            .take_while(|&&(d, _)| (silence || trees) && d <= now)
            .map(|&(_, b)| b)
            .filter(|&b| silence || ws.asked[ws.at(r, b)] == u64::MAX)
            .collect();
        if tail {
            let more: Vec<u32> = w
                .tail
                .iter()
                .take_while(|&&(d, _)| d <= now)
                .map(|&(_, b)| b)
                .filter(|b| !asks.contains(b))
                .collect();
            asks.extend(more);
        }
        let rearm = !w.outstanding.is_empty();
        ws.by_timer += asks.len() as u64;
        for &b in &asks {
            ws.ask(r, b, now, &waits);
        }
        for b in asks {
            self.canary_ask(c, r, b);
        }
        if rearm {
            self.arm_worker(c, r, silence, silence || trees);
        }
    }

    /// Rank `r`'s request for block `b`, generation `g`, left its host (unless the rank sent
    /// the block again or got its result since): it is out, for RACK on the answers.
    pub(super) fn worker_asked(&mut self, c: u32, r: u32, b: u32, g: u32) {
        let now = self.now;
        let st = &mut self.canary[c as usize];
        if st.sent_gen(r, b) != g || st.has(r, b) {
            return;
        }
        let Some(ws) = st.workers.as_mut() else {
            return;
        };
        let k = ws.at(r, b);
        if ws.asked[k] == u64::MAX {
            return;
        }
        ws.answered(r, b);
        ws.out[k] = now;
        let w = &mut ws.worker[r as usize];
        w.asking.insert((now, b));
        if let Some((direct, tx, cap, free)) = ws.tail {
            // A request for a block still underway is answered only once it is done (the
            // leader's switches may wait a long timeout): asks beyond those loss explains
            // wait twice as long each, up to the silence, as TCP backs its timer off.
            let n = w.asking.len() as u64;
            let wait = direct.saturating_add(tx.saturating_mul(2 * n));
            let shift = u32::from(ws.asks[k].saturating_sub(free)).min(40);
            let again = now.saturating_add(wait.saturating_mul(1 << shift).min(cap.max(wait)));
            ws.again[k] = again;
            ws.worker[r as usize].tail.insert((again, b));
            // The timer may wait for a silence, armed while this request was still at the
            // host: the tail's ask may be due sooner.
            let timer = ws.worker[r as usize].timer;
            if ws.tail_due(r).is_some_and(|d| d < timer) {
                self.arm_worker(c, r, false, false);
            }
        }
    }

    /// Rank `r` asks the leader of block `b` of job `c` for its result (Section 3.3), naming
    /// the generation it last sent.
    fn canary_ask(&mut self, c: u32, r: u32, b: u32) {
        let st = &self.canary[c as usize];
        let g0 = st.sent_gen(r, b);
        let plan = &self.cjobs[c as usize].plan;
        let leader = plan.hosts[plan.leader(b) as usize];
        let me = plan.hosts[r as usize];
        let h = plan.control(Kind::Retransmit, plan.id_gen(b, g0), leader, me);
        self.canary_emit(me, h, leader, None);
    }
}
