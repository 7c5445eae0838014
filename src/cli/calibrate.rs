//! `collc calibrate FILE.coll LOG`: the arguments of [`crate::driver::calibrate`], which fits
//! the flow model to what a user measured with nccl-tests on the file's machine. Prints the
//! fit's table (its error at each size) and writes the fitted `model` declaration (to standard
//! output after the table, or `-o OUT.coll`) for the user to paste into the file.

use super::{CheckArgs, Out, load_options, options, write_output};
use crate::diag::SourceMap;
use crate::driver::Input;
use crate::driver::calibrate::{CalibrateRequest, calibrate_file};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub(super) struct CalibrateArgs {
    /// The `.coll` file of the machine the log was measured on.
    file: PathBuf,
    /// nccl-tests output (`all_gather_perf ... > LOG`), as it was printed.
    log: PathBuf,
    /// The algorithm that produced the log (NCCL_ALGO): `ring`, or `tree` for an allreduce.
    #[arg(long, value_name = "ALGO")]
    algo: Option<String>,
    /// The runtime: `nccl` or `rccl`. Default: the file's flow model's, else `nccl`.
    #[arg(long, value_name = "RUNTIME")]
    runtime: Option<String>,
    /// The protocol the log ran with (`simple`, `ll`, `ll128`). Default: the log's
    /// NCCL_PROTO, else `simple`.
    #[arg(long, value_name = "PROTO")]
    proto: Option<String>,
    /// Which table of the log (1 for the first). Default: the one that measured the file's
    /// collective.
    #[arg(long, value_name = "N")]
    table: Option<usize>,
    /// The name of the written model.
    #[arg(long, value_name = "NAME", default_value = "calibrated")]
    name: String,
    /// Write the model declaration here instead of standard output.
    #[arg(short, long, value_name = "OUT.coll")]
    output: Option<PathBuf>,
    #[command(flatten)]
    args: CheckArgs,
}

pub(super) fn run(a: CalibrateArgs, out: &Out) -> i32 {
    let mut files = SourceMap::new();
    let mut diags = Vec::new();
    let opts = options(&a.args, &mut files, &mut diags);
    if !diags.is_empty() {
        out.diags(&diags, &files);
        return 1;
    }
    let req = CalibrateRequest {
        algo: a.algo,
        runtime: a.runtime,
        proto: a.proto,
        table: a.table,
        name: a.name,
    };
    let input = Input::Path(a.file);
    let log = Input::Path(a.log);
    match calibrate_file(&input, &load_options(&a.args, opts), &log, &req) {
        Ok(cal) => {
            out.diags(&cal.warnings, &cal.files);
            match &a.output {
                Some(_) => {
                    print!("{}", cal.table);
                    write_output(a.output.as_deref(), cal.declaration.as_bytes())
                }
                None => write_output(
                    None,
                    format!("{}\n{}", cal.table, cal.declaration).as_bytes(),
                ),
            }
        }
        Err(f) => {
            out.diags(&f.diagnostics, &f.files);
            1
        }
    }
}
