//! `collc fmt`: files formatted in place in the canonical style ([`crate::fmt`]), or standard
//! input to standard output; `--check` writes nothing and exits 1 when a file is not formatted.

use super::{Out, read_source, write_atomic, write_output};
use crate::diag::{Code, SourceMap};
use std::io::Read;
use std::path::PathBuf;

pub(super) fn fmt(paths: Vec<PathBuf>, check: bool, out: &Out) -> i32 {
    if paths.is_empty() {
        let mut src = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut src) {
            super::output::say(&format!(
                "error[{}]: cannot read standard input: {e}\n",
                Code::Io
            ));
            return 2;
        }
        let mut files = SourceMap::new();
        let id = files.add("<stdin>", src.clone());
        return match crate::fmt::format_source(id, &src) {
            Ok(s) => {
                if check {
                    return i32::from(s != src);
                }
                write_output(None, s.as_bytes())
            }
            Err(d) => {
                out.diags(&d, &files);
                1
            }
        };
    }
    let mut status = 0;
    for p in paths {
        let mut files = SourceMap::new();
        let id = match read_source(&p, &mut files) {
            Ok(id) => id,
            Err(d) => {
                out.diags(&[*d], &files);
                status = status.max(1);
                continue;
            }
        };
        let src = files.get(id).text.clone();
        match crate::fmt::format_source(id, &src) {
            Ok(s) if s == src => {}
            Ok(s) => {
                if check {
                    eprintln!("{} is not formatted", p.display());
                    status = status.max(1);
                } else if let Err(e) = write_atomic(&p, s.as_bytes()) {
                    eprintln!("error[{}]: cannot write `{}`: {e}", Code::Io, p.display());
                    status = 2;
                }
            }
            Err(d) => {
                out.diags(&d, &files);
                status = status.max(1);
            }
        }
    }
    status
}
