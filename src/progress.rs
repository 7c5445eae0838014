//! Progress of long work, reported without terminal I/O: the library says which [`Phase`] it
//! enters and, for work of known length (the compare sweep), when each step is done; whoever
//! runs it decides what to show. The command line draws a spinner or bar on a terminal and
//! prints each phase's wall time with `-v` (`cli::progress`); everything else passes [`Quiet`].
//! The hook is called from worker threads too, so it is `Sync`.

/// A stage of a command's work, as `-v` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Phase {
    /// Reading, parsing, elaborating and checking the file.
    Check,
    /// ForestColl's solver: the optimum, switch removal and tree packing (its steps follow
    /// as the `Solve*` phases when the solver is given a progress hook).
    Solve,
    /// The solver's exact integer capacities (Appendix C's scaling).
    SolveCapacities,
    /// The solver's optimum 1/x* and bottleneck cut (Algorithm 1).
    SolveOptimum,
    /// The solver's k and y (Proposition 3, or Algorithm 3 for a fixed k).
    SolvePlan,
    /// Switch removal and tree packing, fast paths first (Algorithms 2 and 5).
    SolvePacking,
    /// The trees mapped back to physical routes.
    SolveRoutes,
    /// The pipelined chunk count (`chunks: auto`'s model, or the fixed count's cost).
    SolveChunks,
    /// Lowering the schedule into the dataflow IR.
    Lower,
    /// Proving the program with `ir::verify`.
    Verify,
    /// Writing the target's output (GOAL, MSCCL XML, an MPI project, a report, a plot).
    Emit,
    /// Simulating the schedule.
    Simulate,
    /// `collc compare`: every (family, size) pair, one step each.
    Sweep,
}

impl Phase {
    /// The phase's name in `-v` output and on the spinner.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Check => "parse/check",
            Phase::Solve => "solve",
            Phase::SolveCapacities => "solve: capacities",
            Phase::SolveOptimum => "solve: optimum",
            Phase::SolvePlan => "solve: k and y",
            Phase::SolvePacking => "solve: switch removal and packing",
            Phase::SolveRoutes => "solve: routes",
            Phase::SolveChunks => "solve: chunks",
            Phase::Lower => "lower",
            Phase::Verify => "verify",
            Phase::Emit => "emit",
            Phase::Simulate => "simulate",
            Phase::Sweep => "compare",
        }
    }
}

/// Receives progress; every method does nothing unless implemented.
pub trait Progress: Sync {
    /// `phase` begins and the one before it, if any, ends. `steps` is how many [`Progress::step`]
    /// calls the phase will make, when it makes any.
    fn phase(&self, _phase: Phase, _steps: Option<u64>) {}

    /// One step of the current phase is done (from any thread).
    fn step(&self) {}
}

/// Progress nobody watches.
#[derive(Debug, Clone, Copy, Default)]
pub struct Quiet;

impl Progress for Quiet {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[derive(Default)]
    struct Log(Mutex<Vec<String>>);

    impl Progress for Log {
        fn phase(&self, p: Phase, steps: Option<u64>) {
            if let Ok(mut l) = self.0.lock() {
                l.push(format!("{} {steps:?}", p.name()));
            }
        }
        fn step(&self) {
            if let Ok(mut l) = self.0.lock() {
                l.push("step".into());
            }
        }
    }

    #[test]
    fn quiet_ignores_and_a_hook_sees_phases_in_order() {
        Quiet.phase(Phase::Solve, None);
        Quiet.step();
        let log = Log::default();
        let p: &dyn Progress = &log;
        p.phase(Phase::Check, None);
        p.phase(Phase::Sweep, Some(2));
        p.step();
        assert_eq!(
            log.0.lock().map(|l| l.clone()).unwrap_or_default(),
            ["parse/check None", "compare Some(2)", "step"]
        );
    }
}
