//! The command line's side of [`crate::progress`]: a spinner on standard error while a phase
//! runs (a bar with a count for the compare sweep), drawn only when standard error is a
//! terminal, so tests and pipes never see it; and with `-v`, each phase's wall time on standard
//! error as it ends (`collc: solve    12.34 ms`).
//!
//! While a bar is drawn, everything the command line prints on standard error or standard output
//! goes through [`clear`], which hides the bar for the time of the print.

use crate::progress::{Phase, Progress};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// `-v` / `--verbose`, shared by `build`, `sim` and `compare`.
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub(super) struct Verbose {
    /// Print each phase's wall time to standard error (parse/check, solve, lower, verify, emit,
    /// simulate, compare).
    #[arg(short, long)]
    pub(super) verbose: bool,
}

/// The bar being drawn, if any: at most one command runs per process.
static ACTIVE: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// Runs `print` with the active bar, if any, hidden.
pub(super) fn clear<R>(print: impl FnOnce() -> R) -> R {
    let bar = ACTIVE.lock().ok().and_then(|b| b.clone());
    match bar {
        Some(b) => b.suspend(print),
        None => print(),
    }
}

/// Shows a command's progress; see the module doc. Finished when dropped.
pub(super) struct Reporter {
    bar: ProgressBar,
    verbose: bool,
    current: Mutex<Option<(Phase, Instant)>>,
}

impl Reporter {
    pub(super) fn new(v: Verbose) -> Reporter {
        let bar = if std::io::stderr().is_terminal() {
            ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
        } else {
            ProgressBar::hidden()
        };
        if let Ok(mut a) = ACTIVE.lock() {
            *a = Some(bar.clone());
        }
        Reporter {
            bar,
            verbose: v.verbose,
            current: Mutex::new(None),
        }
    }

    /// Ends the current phase and removes the bar: call before printing results.
    pub(super) fn finish(&self) {
        self.end();
        self.bar.finish_and_clear();
        if let Ok(mut a) = ACTIVE.lock() {
            *a = None;
        }
    }

    fn end(&self) {
        let done = self.current.lock().ok().and_then(|mut c| c.take());
        if let (true, Some((phase, start))) = (self.verbose, done) {
            let ms = start.elapsed().as_secs_f64() * 1e3;
            self.bar
                .suspend(|| eprintln!("collc: {:<33} {ms:>10.2} ms", phase.name()));
        }
    }
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_spinner())
}

impl Progress for Reporter {
    fn phase(&self, phase: Phase, steps: Option<u64>) {
        self.end();
        match steps {
            Some(n) => {
                self.bar
                    .set_style(style("{spinner} {msg} [{bar:30}] {pos}/{len} ({elapsed})"));
                self.bar.set_length(n);
                self.bar.set_position(0);
            }
            None => {
                self.bar.set_style(style("{spinner} {msg} ({elapsed})"));
                self.bar.unset_length();
            }
        }
        self.bar.set_message(phase.name());
        if !self.bar.is_hidden() {
            self.bar.enable_steady_tick(Duration::from_millis(120));
        }
        if let Ok(mut c) = self.current.lock() {
            *c = Some((phase, Instant::now()));
        }
    }

    fn step(&self) {
        self.bar.inc(1);
    }
}

impl Drop for Reporter {
    fn drop(&mut self) {
        self.finish();
    }
}
