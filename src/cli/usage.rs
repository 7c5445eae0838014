//! Command-line argument errors: clap's (an unknown flag, a value out of range, a missing
//! argument) become E0055 with clap's message and usage hint, exit code 1 like any other error
//! in what the user gave; `--help` and `--version` are written like every standard output, so
//! one that cannot be written is E0029 and exit 2.

use super::output::{say, write_stdout};
use crate::diag::{Code, Diagnostic, SourceMap, Span, render};

/// Prints what clap stopped on; the exit code.
pub(super) fn clap_error(e: &clap::Error) -> i32 {
    let text = e.render().to_string();
    if !e.use_stderr() {
        return write_stdout(text.as_bytes());
    }
    if json_wanted() {
        let (message, help) = split(&text);
        let mut files = SourceMap::new();
        let line = command_line();
        let f = files.add("<command line>", line.clone());
        let d = Diagnostic::error(Code::CommandLine, Span::new(f, 0, line.len()), message)
            .label("these arguments")
            .help(help);
        say(&render::to_json_lines(&[d], &files));
    } else {
        say(&coded(&text));
    }
    1
}

/// clap's text with the code in its `error:` prefix; help shown because no command was
/// given gets a first line of its own.
fn coded(text: &str) -> String {
    match text.strip_prefix("error:") {
        Some(rest) => format!("error[{}]:{rest}", Code::CommandLine),
        None => format!(
            "error[{}]: collc needs a command\n\n{text}",
            Code::CommandLine
        ),
    }
}

/// clap's message (its first line, without `error: `) and the rest (the usage hint).
fn split(text: &str) -> (String, String) {
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    let message = match first.strip_prefix("error: ") {
        Some(m) => m.to_string(),
        None => "collc needs a command".to_string(),
    };
    let help: Vec<&str> = rest
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    (message, help.join(" "))
}

/// Whether the arguments ask for JSON diagnostics (clap did not get as far as saying so).
fn json_wanted() -> bool {
    let args: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    args.iter().any(|a| a == "--error-format=json")
        || args
            .windows(2)
            .any(|w| w[0] == "--error-format" && w[1] == "json")
}

/// The command line as one string, for a diagnostic's span.
fn command_line() -> String {
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    format!("collc {}", args.join(" "))
}

/// An error in collc's own check of an argument: `error[E0055]: MESSAGE` and a help line; the
/// exit code.
pub(super) fn refuse(message: &str, help: Option<&str>) -> i32 {
    let help = help.map_or(String::new(), |h| format!("  = help: {h}\n"));
    say(&format!("error[{}]: {message}\n{help}", Code::CommandLine));
    1
}
