//! The report of a GOAL schedule's run in LogGOPSim's format (`Times:`, `Host r: t`, `Maximum
//! finishing time`, `%g` numbers), the E0038 diagnostics of a schedule that cannot finish, and
//! the E0046 and E0047 of a run over the limits.

use crate::backend::goal::{GoalSchedule, validate::At};
use crate::diag::{Code, Diagnostic, Span};
use crate::sim::{Model, SimResult, TimeUnit};

/// LogGOPSim's `%g`: six significant digits, scientific below 1e-4 or from 1e6.
pub(super) fn fmt_g(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let exp = format!("{v:.5e}");
    let (mant, e) = exp.split_once('e').unwrap_or((&exp, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    if !(-4..6).contains(&e) {
        let mant = mant.trim_end_matches('0').trim_end_matches('.');
        let sign = if e < 0 { '-' } else { '+' };
        return format!("{mant}e{sign}{:02}", e.abs());
    }
    let decimals = (5 - e).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// The report printed on standard output; with `batch` (`-b`, LogGOPSim's batch mode) only the
/// line with the maximum finishing time, or the queues of a run that did not finish.
/// `p` is the schedule's number of ranks.
pub(super) fn report(p: usize, r: &SimResult, m: &Model, unit: TimeUnit, batch: bool) -> String {
    let mut out = String::new();
    if !(batch && r.complete()) {
        out.push_str(&format!(
            "{}\nsize: {p} ({} CPUs, {} NICs)\nEvents: {}\n",
            m.describe(unit),
            r.cpus,
            r.nics,
            r.events
        ));
    }
    if !r.complete() {
        for q in &r.unexpected {
            out.push_str(&format!(
                "unexpected queue on host {} contains a message from {} (tag {})\n",
                q.host, q.peer, q.tag
            ));
        }
        for q in &r.unmatched {
            out.push_str(&format!(
                "receive queue on host {} contains a receive from {} (tag {})\n",
                q.host, q.peer, q.tag
            ));
        }
        return out;
    }
    if p <= 16 && !batch {
        out.push_str("Times:\n");
        for (h, t) in r.finish.iter().enumerate() {
            out.push_str(&format!("Host {h}: {}\n", unit.show(*t)));
        }
    }
    out.push_str(&format!(
        "Maximum finishing time at host {}: {} ({} s)\n",
        r.max_rank,
        unit.show(r.max),
        fmt_g(unit.ns(r.max) / 1e9)
    ));
    out
}

/// E0047 for a run whose simulated time overflowed, E0046 for one stopped at the event limit.
pub(super) fn out_of_bounds(
    r: &SimResult,
    max_events: u64,
    at: impl Fn(At) -> Span,
) -> Option<Diagnostic> {
    if let Some((rank, op)) = r.overflow {
        let d = Diagnostic::error(
            Code::SimTimeOverflow,
            at(At::Op(rank, op)),
            format!("the simulated time of this op on rank {rank} goes past 2^64 ticks"),
        );
        let d = match r.wrapped {
            Some((wr, wo)) => d
                .label("it waits for a time that wrapped below zero (a CPU or NIC busy until almost 2^64)")
                .secondary(
                    at(At::Op(wr, wo)),
                    format!("the first time that wrapped below zero: this 0-byte message on rank {wr}"),
                )
                .help("give the model g >= G and o >= O (LogGOPSim's defaults: g=1000, G=6, o=1500, O=0), or `--loggp-wrap` for LogGOPSim's wrapped times")
                .note(
                    "LogGOPSim's unsigned `(size-1)*G` is 2^64-G for a 0-byte message, so a time such as `t+g-G` with t+g < G wraps to just under 2^64; LogGOPSim then wraps this op's time round to an early one",
                ),
            None => d
                .label("its size times the per-byte gap overflows")
                .help("check the op's size and the model's parameters (-G, -O, -L); times are counted in 64-bit ticks")
                .note("LogGOPSim wraps such times around and reports a finish time that is too early"),
        };
        return Some(d);
    }
    r.stopped.then(|| {
        Diagnostic::error(
            Code::ProgramTooLarge,
            at(At::Schedule),
            format!("the simulation stopped after {} events, the limit", r.events),
        )
        .label("too many events")
        .help(format!(
            "simulate fewer ranks or ops; if the size is intended, raise the limit with `--max-events {}`",
            max_events.saturating_add(1).checked_next_power_of_two().unwrap_or(u64::MAX)
        ))
    })
}

/// Why a run did not finish, as E0038 diagnostics located by `at`.
pub(super) fn incomplete(
    s: &GoalSchedule,
    r: &SimResult,
    at: impl Fn(At) -> Span,
) -> Vec<Diagnostic> {
    let mut d = Vec::new();
    // With wildcards, the pairing this run made is one of several the timing allows.
    let wild = crate::backend::goal::validate::has_wildcards(s);
    let noted = |d: Diagnostic| {
        if wild {
            d.note("the schedule has wildcards (`from -1`, `tag -1`): a wildcard receive takes the first compatible message to arrive, so other parameters may pair messages differently")
        } else {
            d
        }
    };
    for q in r.unexpected.iter().take(8) {
        d.push(noted(
            Diagnostic::error(
                Code::GoalInvalid,
                at(At::Op(q.op.0, q.op.1)),
                format!("this message to rank {} is never received", q.host),
            )
            .label("left in the unexpected queue")
            .help("under these parameters the schedule cannot finish: a recv is missing or waits on this rank's progress (a rendezvous deadlock with messages above S)")
        ));
    }
    for q in r.unmatched.iter().take(8) {
        d.push(noted(
            Diagnostic::error(
                Code::GoalInvalid,
                at(At::Op(q.op.0, q.op.1)),
                format!("this receive on rank {} never gets its message", q.host),
            )
            .label("left in the receive queue")
            .help("the matching send never runs under these parameters (a deadlock), or does not exist")
        ));
    }
    if d.is_empty() {
        d.push(
            Diagnostic::error(
                Code::GoalInvalid,
                at(At::Schedule),
                format!(
                    "{} of {} ops never ran",
                    r.ops_total - r.ops_run,
                    s.op_count()
                ),
            )
            .label("the schedule does not finish")
            .help("look for dependency cycles (`collc check FILE.goal`)"),
        );
    }
    d
}

#[cfg(test)]
mod tests {
    use super::fmt_g;

    #[test]
    fn g_format_matches_c() {
        assert_eq!(fmt_g(1.1284e-5), "1.1284e-05");
        assert_eq!(fmt_g(0.001211188), "0.00121119");
        assert_eq!(fmt_g(2.5), "2.5");
        assert_eq!(fmt_g(1234567.0), "1.23457e+06");
    }
}
