//! Diagnostics that point into an option's value: each option is shown as the command-line
//! text `--FLAG VALUE`, a "<command line>" file of its own, so a bad value is underlined
//! where it was written (the Python package names the same options by their flags).

use crate::diag::{Code, Diagnostic, SourceMap, Span};
use std::ops::Range;

/// The bytes `at` of `value` in the command-line text `--FLAG VALUE`, added to `files`.
pub(crate) fn at_flag(files: &mut SourceMap, flag: &str, value: &str, at: Range<usize>) -> Span {
    let f = files.add("<command line>", format!("--{flag} {value}"));
    let skip = flag.len() + 3;
    Span::new(f, skip + at.start, skip + at.end)
}

/// E0024 on the whole of `--FLAG VALUE`'s value: "`--FLAG VALUE`: {what}", labelled "here".
pub(crate) fn bad_value(
    files: &mut SourceMap,
    flag: &str,
    value: &str,
    what: &str,
    help: &str,
) -> Diagnostic {
    Diagnostic::error(
        Code::BadValue,
        at_flag(files, flag, value, 0..value.len()),
        format!("`--{flag} {value}`: {what}"),
    )
    .label("here")
    .help(help.to_string())
}
