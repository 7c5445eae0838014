//! The command line: `collc check`, `collc build`, `collc sim`, `collc compare`,
//! `collc calibrate`, `collc fmt`,
//! `collc explain`, `collc lsp`.
//!
//! Exit codes: 0 when everything is fine (warnings alone are printed and exit 0; `collc check
//! --strict` makes an MSCCL XML's warnings errors), 1 when the input or the arguments have errors
//! (diagnostics printed; E0055 for arguments), 2 when collc itself fails (an internal error or an
//! output it cannot write, E0029: a full disk, a closed pipe, a standard output the shell
//! closed). Output files are
//! written to a temporary file in the same directory and renamed into place, so an error never
//! leaves a partial file behind. Colour is used only when stderr is a terminal (and `NO_COLOR`
//! is unset), unless `--color` says otherwise.

mod build;
mod calibrate;
mod compare;
mod explain;
mod format;
mod msccl;
mod output;
mod progress;
pub(crate) mod sim;
mod streams;
mod usage;

use crate::diag::{Code, Diagnostic, SourceMap, Span};
pub(crate) use crate::driver::write_atomic;
use crate::driver::{inputs, source, temps};
use crate::sema::{self, elab::Limits};
use clap::{Parser, Subcommand, ValueEnum};
use output::Out;
pub(crate) use output::write_output;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
pub use streams::probe as probe_standard_streams;
pub use temps::exit;

#[derive(Parser, Debug)]
#[command(
    name = "collc",
    version,
    about = "A compiler for collective-communication schedules"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
    /// How to print diagnostics.
    #[arg(long, global = true, value_enum, default_value_t = ErrorFormat::Human)]
    error_format: ErrorFormat,
    /// When to colour diagnostics.
    #[arg(long, global = true, value_enum, default_value_t = Color::Auto)]
    color: Color,
}

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
pub(super) enum ErrorFormat {
    Human,
    Json,
}

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
enum Color {
    Auto,
    Always,
    Never,
}

#[derive(clap::Args, Debug, Clone)]
struct CheckArgs {
    /// Override a `param` of the file: `--param n=16`, `--param bw="25 GB/s"`.
    #[arg(long = "param", value_name = "NAME=VALUE")]
    params: Vec<String>,
    /// Most nodes a topology may generate.
    #[arg(long, default_value_t = Limits::default().max_nodes)]
    max_nodes: usize,
    /// Most directed links (each direction and parallel copy counted) a topology may generate.
    #[arg(long, default_value_t = Limits::default().max_links)]
    max_links: usize,
    /// Most loop iterations while generating a topology.
    #[arg(long, default_value_t = Limits::default().max_iterations)]
    max_iterations: u64,
    /// Most ops a lowered program may have (estimated before lowering).
    #[arg(long, default_value_t = Limits::MAX_OPS)]
    max_ops: u64,
    /// Most buffer slots (chunks, all processes) a program may have, lowered or read from
    /// `.ir` or `.xml`.
    #[arg(long, default_value_t = Limits::MAX_SLOTS)]
    max_slots: u64,
    /// Most events a simulation may process.
    #[arg(long, default_value_t = Limits::MAX_EVENTS)]
    max_events: u64,
    /// Most packets the packet simulator may hold at once (queued, in flight).
    #[arg(long, default_value_t = Limits::MAX_PACKETS)]
    max_packets: u64,
    /// Most bytes of an input file read whole (`collc sim FILE.goal` streams what it can).
    #[arg(long, value_name = "BYTES", default_value_t = source::MAX_INPUT_BYTES)]
    max_input_bytes: u64,
}

#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
enum Emit {
    /// The elaborated model: nodes, links, collective, schedule.
    Model,
    /// The lowered and verified dataflow IR, in its text form.
    Ir,
    /// What the file builds and when the runtime uses it (MSCCL selection conditions).
    Report,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Check files and report every problem.
    Check {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Make the warnings of an MSCCL XML errors: ranks that combine in different orders
        /// (E0052) and a collective collc cannot execute (E0053).
        #[arg(long)]
        strict: bool,
        #[command(flatten)]
        args: CheckArgs,
    },
    /// Check a file and emit what it describes.
    Build(Box<build::BuildArgs>),
    /// Compare every schedule family for the file's collective over a range of sizes.
    ///
    /// Simulates each family on the file's topology under the flow-level model and prints per
    /// size the time, algbw and busbw (nccl-tests' definitions), the winner and the crossovers;
    /// `--plot` draws algbw against size as SVG.
    Compare(Box<compare::CompareArgs>),
    /// Fit the flow model to nccl-tests output measured on the file's machine.
    ///
    /// Prints the fit's error at each measured size and writes a `model` declaration (to
    /// standard output, or `-o OUT.coll`) that `collc compare`, `collc sim` and `schedule auto`
    /// use once it is pasted into the file.
    Calibrate(Box<calibrate::CalibrateArgs>),
    /// Format files in place in the canonical style (standard input to output with no files).
    Fmt {
        files: Vec<PathBuf>,
        /// Do not write; exit 1 if any file is not formatted.
        #[arg(long)]
        check: bool,
    },
    /// Explain an error code, e.g. `collc explain E0014`.
    Explain { code: String },
    /// Run the language server on standard input and output (for editors).
    Lsp,
    /// Simulate a `.goal` schedule (LogGP, as LogGOPSim) or a `.coll` file under its cost model.
    Sim(Box<sim::SimArgs>),
}

/// Runs the command line; returns the process exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => return usage::clap_error(&e),
    };
    let color = match cli.color {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    };
    let out = Out {
        format: cli.error_format,
        color,
    };
    temps::install_signal_cleanup();
    // A generous stack: elaboration recurses over the (depth-limited) syntax tree.
    let worker = std::thread::Builder::new()
        .name("collc".into())
        .stack_size(256 << 20)
        .spawn(move || {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(cli.cmd, &out)))
        });
    let result = match worker {
        Ok(handle) => handle
            .join()
            .unwrap_or(Err(Box::new("worker thread failed"))),
        Err(e) => {
            output::say(&format!("error: cannot start the compiler thread: {e}\n"));
            return 2;
        }
    };
    let code = match result {
        Ok(code) => code,
        Err(_) => {
            output::say(&format!(
                "error[{}]: internal compiler error; please report it with the input that caused it\n",
                Code::Internal
            ));
            2
        }
    };
    // What could not be said is an output collc could not write.
    if output::stderr_lost() {
        code.max(2)
    } else {
        code
    }
}

fn options(a: &CheckArgs, files: &mut SourceMap, diags: &mut Vec<Diagnostic>) -> sema::Options {
    source::set_limit(a.max_input_bytes);
    let mut params = Vec::new();
    for p in &a.params {
        match p.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                params.push((k.trim().to_string(), v.to_string()))
            }
            _ => {
                let f = files.add("<command line>", format!("--param {p}"));
                diags.push(
                    Diagnostic::error(
                        Code::Syntax,
                        Span::new(f, 8, 8 + p.len()),
                        format!("`--param {p}` is not NAME=VALUE"),
                    )
                    .label("expected NAME=VALUE")
                    .help("write e.g. `--param n=16`"),
                );
            }
        }
    }
    sema::Options {
        limits: Limits {
            max_nodes: a.max_nodes,
            max_links: a.max_links,
            max_iterations: a.max_iterations,
            max_ops: a.max_ops,
            max_slots: a.max_slots,
            max_events: a.max_events,
            max_packets: a.max_packets,
            ..Limits::default()
        },
        params,
        cancel: None,
    }
}

fn read_source(path: &Path, files: &mut SourceMap) -> Result<crate::diag::FileId, Box<Diagnostic>> {
    crate::driver::read(
        &crate::driver::Input::Path(path.to_path_buf()),
        files,
        source::limit(),
    )
}

/// The driver's options for `args`, whose `param`s and limits `opts` already holds.
fn load_options(args: &CheckArgs, opts: sema::Options) -> crate::driver::LoadOptions {
    crate::driver::LoadOptions {
        params: opts.params,
        limits: opts.limits,
        max_input_bytes: args.max_input_bytes,
        cancel: opts.cancel,
    }
}

/// `collc check`: every file named, and the files collc reads in every directory named
/// ([`inputs`]), each typed by extension or content; exit 1 when any has an error (warnings
/// are printed, and with `strict` an MSCCL XML's warnings are errors).
fn check(paths: Vec<PathBuf>, strict: bool, args: &CheckArgs, out: &Out) -> i32 {
    let mut status = 0;
    for arg in paths {
        let mut files = SourceMap::new();
        let expanded = match inputs::expand(&arg) {
            Ok((v, _)) if v.is_empty() => Err(inputs::dir_error(
                &mut files,
                &arg,
                "holds no .coll, MSCCL XML, IR or GOAL file".into(),
            )),
            Ok((v, note)) => {
                if let Some(n) = note {
                    output::say(&format!("{n}\n"));
                }
                Ok(v)
            }
            Err(e) => Err(inputs::dir_error(
                &mut files,
                &arg,
                format!("cannot be listed: {e}"),
            )),
        };
        let expanded = match expanded {
            Ok(v) => v,
            Err(d) => {
                out.diags(&[d], &files);
                status = 1;
                continue;
            }
        };
        for p in expanded {
            let mut files = SourceMap::new();
            let mut diags = Vec::new();
            let opts = options(args, &mut files, &mut diags);
            if !diags.is_empty() {
                out.diags(&diags, &files);
                status = 1;
                continue;
            }
            let checked = crate::driver::check(
                &crate::driver::Input::Path(p),
                &load_options(args, opts),
                strict,
            );
            if checked.has_errors() {
                status = 1;
            }
            out.diags(&checked.diagnostics, &checked.files);
        }
    }
    status
}

fn run(cmd: Cmd, out: &Out) -> i32 {
    match cmd {
        Cmd::Check {
            files: paths,
            strict,
            args,
        } => check(paths, strict, &args, out),
        Cmd::Build(a) => build::run(*a, out),
        Cmd::Compare(a) => compare::run(*a, out),
        Cmd::Calibrate(a) => calibrate::run(*a, out),
        Cmd::Fmt {
            files: paths,
            check,
        } => format::fmt(paths, check, out),
        Cmd::Explain { code } => explain::explain(&code),
        Cmd::Lsp if streams::stdout_closed() => output::write_stdout(b""),
        Cmd::Lsp => crate::lsp::run_stdio(),
        Cmd::Sim(a) => sim::run(*a, out),
    }
}
