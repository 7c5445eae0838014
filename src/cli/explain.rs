//! `collc explain E0xxx`: prints the page docs/errors/E0xxx.md, embedded at build time.

use crate::diag::Code;

include!(concat!(env!("OUT_DIR"), "/error_docs.rs"));

/// The documentation page of a code, if it has one.
pub fn page(code: Code) -> Option<&'static str> {
    PAGES
        .iter()
        .find(|(c, _)| *c == code.as_str())
        .map(|(_, t)| *t)
}

pub(super) fn explain(arg: &str) -> i32 {
    match Code::parse(arg) {
        Some(code) => match page(code) {
            Some(text) => super::write_output(None, text.as_bytes()),
            None => {
                eprintln!(
                    "error: {code} ({}) has no documentation page; this is a bug in collc",
                    code.title()
                );
                2
            }
        },
        None => {
            eprintln!("error: `{arg}` is not an error code collc uses");
            eprintln!(
                "help: codes look like E0014; collc uses E0001 to {}",
                Code::ALL.last().map(|c| c.as_str()).unwrap_or("E0001")
            );
            1
        }
    }
}
