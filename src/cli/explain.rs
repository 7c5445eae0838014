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
                super::output::say(&format!(
                    "error[{}]: {code} ({}) has no documentation page; this is a bug in collc\n",
                    Code::Internal,
                    code.title()
                ));
                2
            }
        },
        None => {
            let last = Code::ALL.last().map_or("E0001", |c| c.as_str());
            super::usage::refuse(
                &format!("`{arg}` is not an error code collc uses"),
                Some(&format!(
                    "codes look like E0014; collc uses E0001 to {last}"
                )),
            )
        }
    }
}
