//! Size windows (`collc build FILE --target msccl --size-windows RANGE -o DIR`, Python's
//! `Session.size_windows`): one MSCCL XML per message-size
//! window, so the runtime (which takes the first XML whose `minBytes..maxBytes` holds the call's
//! size) runs the fastest schedule for each size, as NCCL's tuner picks an algorithm by size.
//! The windows come from simulating every candidate family on the file's topology over the
//! sweep ([`crate::choose::windows`]); each window's XML is built at its largest size and
//! validated like any other. A window whose fastest family cannot be written as MSCCL XML (an
//! executor limit) falls back to the next fastest and says so.
//!
//! Each XML is selectable by construction ([`crate::backend::msccl::selectable`]): it starts
//! at the first size the runtime picks it at. Below that (one loop of its chunks), the sizes
//! get a window of their own, built at the largest of them, among the window's families
//! re-ranked there (and one ring on one channel, the fewest chunks a ring has), keeping only
//! an XML the runtime picks there; repeated until the window's sizes are covered or nothing
//! smaller is picked. The nccl-tests sizes of the range that no XML covers are one E0054
//! warning. The XMLs come back named `NN-FAMILY.xml`, numbered in size order, with a summary
//! listing the windows and the sizes the runtime picks each at; a front end writes them.

use super::{Failure, MscclOverrides, Session};
use crate::backend::msccl::{Algo, selectable};
use crate::choose::windows::{Window, describe, windows};
use crate::diag::{Code, Diagnostic};
use crate::sema::model::{AutoOr, Family, Model};
use std::fmt::Write as _;

/// The windows' XMLs: files named in size order, the summary, and the warnings.
#[derive(Clone, Debug)]
pub struct Windows {
    /// `NN-FAMILY.xml` and its text.
    pub files: Vec<(String, String)>,
    /// One line per XML: its window, the family, its simulated time and the nccl-tests sizes
    /// the runtime picks it at.
    pub summary: String,
    /// E0045 from the builds, E0054 for sizes no XML is picked at.
    pub warnings: Vec<Diagnostic>,
}

impl Session {
    /// One MSCCL XML per message-size window over `sizes` (see the module doc).
    pub fn size_windows(&self, sizes: &[u64], msccl: &MscclOverrides) -> Result<Windows, Failure> {
        build(&self.model, msccl, sizes).map_err(|d| self.fail(d))
    }
}

fn build(m: &Model, a: &MscclOverrides, sizes: &[u64]) -> Result<Windows, Vec<Diagnostic>> {
    let params = crate::net::for_file(m, None);
    let ws = windows(m, sizes, &params, &|_| true);
    let mut warnings: Vec<Diagnostic> = Vec::new();
    let type_bytes = m.collective.as_ref().map_or(4, |c| c.dtype.bytes());
    // Built XMLs: (minBytes written, family, summary line without its file name, text, algo).
    let mut pieces: Vec<(u64, String, String, String, Algo)> = Vec::new();
    for w in &ws {
        // The window, then the sizes below where its XML starts (the runtime cannot pick an
        // XML below one loop of its chunks): a build for the largest size there has fewer
        // chunks and covers them, at the bandwidth those sizes allow.
        let mut todo = vec![(w.min, w.max, w.at, true)];
        while let Some((lo, hi, at, whole)) = todo.pop() {
            // A window's families as ranked at its largest size; below where its XML starts,
            // re-ranked at the size built for, and only an XML the runtime picks at some size
            // there is kept (none: those sizes are left to NCCL, and said so below).
            let ranked: Vec<(Family, f64)> = if whole {
                w.ranked.clone()
            } else {
                // One ring on one channel has the fewest chunks per rank a ring can have.
                let one_ring = Family::Ring {
                    slices: AutoOr::Auto,
                    channels: AutoOr::Fixed(1),
                };
                let has_ring = w
                    .ranked
                    .iter()
                    .any(|(f, _)| matches!(f, Family::Ring { .. }));
                let fams: Vec<Family> = w
                    .ranked
                    .iter()
                    .map(|(f, _)| f.clone())
                    .chain(has_ring.then_some(one_ring))
                    .collect();
                crate::choose::windows::rank(m, &fams, at, &params)
            };
            let top = if hi == 0 {
                selectable::OPEN_TOP.max(at)
            } else {
                hi
            };
            let mut last_err = Vec::new();
            let mut done = None;
            for (rank, (family, secs)) in ranked.iter().enumerate() {
                let mm = crate::choose::with_family_and_size(m, family, at);
                let mut o = a.options(&mm);
                o.min_bytes = lo;
                o.max_bytes = hi;
                match crate::backend::msccl::build(&mm, &o) {
                    Ok(e)
                        if whole || !selectable::picked(&e.algo, type_bytes, top).0.is_empty() =>
                    {
                        done = Some((rank, family, *secs, e));
                        break;
                    }
                    Ok(_) => {}
                    Err(d) => last_err = d,
                }
            }
            let Some((rank, family, secs, e)) = done else {
                if whole {
                    return Err(last_err);
                }
                continue;
            };
            // E0054 is said once for all windows, below.
            warnings.extend(
                e.warnings
                    .iter()
                    .filter(|d| d.code != Code::MscclUnselectable)
                    .cloned(),
            );
            let written = e.algo.min_bytes.max(0) as u64;
            let line = format!(
                "{} simulated {}; of nccl-tests' sizes {}{}",
                describe(
                    &Window {
                        min: written,
                        max: hi,
                        at,
                        ..w.clone()
                    },
                    family
                ),
                crate::sim::fluid::show_seconds(secs),
                selectable::describe(&e.algo, type_bytes, top),
                if rank > 0 {
                    format!(
                        " ({} is faster but cannot be written as MSCCL XML{})",
                        crate::compare::short(&ranked[0].0),
                        if whole { "" } else { " the runtime picks here" }
                    )
                } else {
                    String::new()
                }
            );
            // The largest nccl-tests size below where this XML starts, if it is a smaller
            // build than this one.
            let below = selectable::tests_sizes(lo.max(1), written.saturating_sub(1))
                .into_iter()
                .rev()
                .find(|&b| b < at);
            if let Some(b) = below {
                todo.push((lo, written - 1, b, false));
            }
            let file = crate::compare::short(family).replace(' ', "_");
            pieces.push((written, file, line, e.text, e.algo));
        }
    }
    pieces.sort_by_key(|p| p.0);
    let mut built: Vec<(String, String)> = Vec::new();
    let mut summary = String::new();
    for (i, (_, family, line, text, _)) in pieces.iter().enumerate() {
        let name = format!("{i:02}-{family}.xml");
        let _ = writeln!(summary, "{name}: {line}");
        built.push((name, text.clone()));
    }
    // The nccl-tests sizes of the range asked for that no XML is picked at.
    let lo = sizes.first().copied().unwrap_or(8);
    let hi = sizes.last().copied().unwrap_or(lo);
    let left: Vec<u64> = selectable::tests_sizes(lo, hi)
        .into_iter()
        .filter(|&b| {
            !pieces
                .iter()
                .any(|p| selectable::picks_at(&p.4, type_bytes, b))
        })
        .collect();
    if !left.is_empty() {
        warnings.push(
            Diagnostic::warning(
                Code::MscclUnselectable,
                m.build_span(None),
                format!(
                    "no XML of these windows is picked by the runtime at {}: NCCL runs its own algorithm there",
                    selectable::show_sizes(&left)
                ),
            )
            .label("the schedule written as MSCCL XML")
            .help("below one loop of an XML's chunks the runtime cannot pick it; a schedule with fewer chunks per rank (a ring, a recursive schedule) covers smaller sizes"),
        );
    }
    Ok(Windows {
        files: built,
        summary,
        warnings,
    })
}
