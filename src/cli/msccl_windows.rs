//! `collc build FILE --target msccl --size-windows RANGE -o DIR`: one MSCCL XML per message-size
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
//! warning. Every XML is built before any is written; the directory then holds
//! `NN-FAMILY.xml` files, numbered in size order, and standard output lists the windows with
//! the sizes the runtime picks each at.

use super::Out;
use super::msccl::{MscclArgs, options};
use crate::backend::msccl::{Algo, selectable};
use crate::choose::windows::{Window, describe, windows};
use crate::diag::{Code, Diagnostic, SourceMap};
use crate::sema::model::{AutoOr, Family, Model};
use std::fmt::Write as _;
use std::path::Path;

/// Builds and writes the windows' XML files into `dir`.
pub(super) fn build(
    m: &Model,
    a: &MscclArgs,
    sizes: &[u64],
    dir: Option<&Path>,
    out: &Out,
    files: &SourceMap,
) -> i32 {
    let Some(dir) = dir else {
        out.diags(
            &[Diagnostic::error(
                Code::BadValue,
                m.build_span(None),
                "`--size-windows` writes one XML per window and needs a directory",
            )
            .label("the schedule to build")
            .help("add `-o DIR`")],
            files,
        );
        return 1;
    };
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
                let mut o = options(&mm, a);
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
                    out.diags(&last_err, files);
                    return 1;
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
    // E0045, and E0054 for sizes no XML can be picked at.
    out.diags(&warnings, files);
    if let Err(e) = std::fs::create_dir_all(dir) {
        eprintln!(
            "error[{}]: cannot create `{}`: {e}",
            Code::Io,
            dir.display()
        );
        return 2;
    }
    for (name, text) in &built {
        if let Err(e) = super::write_atomic(&dir.join(name), text.as_bytes()) {
            eprintln!(
                "error[{}]: cannot write `{}`: {e}",
                Code::Io,
                dir.join(name).display()
            );
            return 2;
        }
    }
    super::write_output(None, summary.as_bytes())
}
