//! `collc build FILE --target msccl --size-windows RANGE -o DIR`: one MSCCL XML per message-size
//! window, so the runtime (which takes the first XML whose `minBytes..maxBytes` holds the call's
//! size) runs the fastest schedule for each size, as NCCL's tuner picks an algorithm by size.
//! The windows come from simulating every candidate family on the file's topology over the
//! sweep ([`crate::choose::windows`]); each window's XML is built at its largest size and
//! validated like any other. A window whose fastest family cannot be written as MSCCL XML (an
//! executor limit) falls back to the next fastest and says so. Every XML is built before any is
//! written; the directory then holds `NN-FAMILY.xml` files, numbered in size order, and
//! standard output lists the windows.

use super::Out;
use super::msccl::{MscclArgs, options};
use crate::backend::msccl::selectable;
use crate::choose::windows::{Window, describe, windows};
use crate::diag::{Code, Diagnostic, SourceMap};
use crate::sema::model::Model;
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
    let mut built: Vec<(String, String)> = Vec::new();
    let mut warnings: Vec<Diagnostic> = Vec::new();
    let type_bytes = m.collective.as_ref().map_or(4, |c| c.dtype.bytes());
    let mut summary = String::new();
    for (i, w) in ws.iter().enumerate() {
        let mut last_err = Vec::new();
        let mut done = false;
        for (rank, (family, secs)) in w.ranked.iter().enumerate() {
            let mm = crate::choose::with_family_and_size(m, family, w.at);
            let mut o = options(&mm, a);
            o.min_bytes = w.min;
            o.max_bytes = w.max;
            match crate::backend::msccl::build(&mm, &o) {
                Ok(e) => {
                    let name = format!("{i:02}-{}.xml", family.name());
                    warnings.extend(e.warnings.iter().cloned());
                    let top = if w.max == 0 {
                        selectable::OPEN_TOP.max(w.at)
                    } else {
                        w.max
                    };
                    let _ = writeln!(
                        summary,
                        "{name}: {} simulated {}; of nccl-tests' sizes {}{}",
                        describe(
                            &Window {
                                min: e.algo.min_bytes.max(0) as u64,
                                ..w.clone()
                            },
                            family
                        ),
                        crate::sim::fluid::show_seconds(*secs),
                        selectable::describe(&e.algo, type_bytes, top),
                        if rank > 0 {
                            format!(
                                " ({} is faster but cannot be written as MSCCL XML)",
                                w.family.name()
                            )
                        } else {
                            String::new()
                        }
                    );
                    built.push((name, e.text));
                    done = true;
                    break;
                }
                Err(d) => last_err = d,
            }
        }
        if !done {
            out.diags(&last_err, files);
            return 1;
        }
    }
    if let Err(e) = std::fs::create_dir_all(dir) {
        eprintln!(
            "error[{}]: cannot create `{}`: {e}",
            Code::Io,
            dir.display()
        );
        return 2;
    }
    // E0045, and E0054 for sizes no XML of its window can be picked at.
    out.diags(&warnings, files);
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
