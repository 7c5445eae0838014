//! Where the command line's output goes: standard output, or a file written atomically (a
//! temporary file beside it, renamed over it only once everything is written), so that collc
//! never leaves a partial output file behind.
//!
//! `-o` behaves like a shell redirection where rename would do harm: a symbolic link is
//! followed (the link stays, its target is replaced), and an existing path that is not a
//! regular file or directory (`/dev/null`, `/dev/stdout`, a FIFO, a socket) is written into
//! directly. Renaming over such a path would replace the device with a regular file: run as
//! root, `collc build -o /dev/null` used to turn `/dev/null` into a file for every program on
//! the machine.
//!
//! Diagnostics go to standard error ([`Out`]), errors and warnings counted apart.

use super::ErrorFormat;
use crate::diag::{Code, Diagnostic, Severity, SourceMap, render};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` atomically (temporary file and rename), or to stdout.
pub(crate) fn write_output(path: Option<&Path>, bytes: &[u8]) -> i32 {
    match path {
        None => match super::progress::clear(|| std::io::stdout().write_all(bytes)) {
            Ok(()) => 0,
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
            Err(e) => {
                eprintln!("error: cannot write to standard output: {e}");
                2
            }
        },
        Some(p) => match write_atomic(p, bytes) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("error[{}]: cannot write `{}`: {e}", Code::Io, p.display());
                2
            }
        },
    }
}

pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_with(path, |f| f.write_all(bytes))
}

/// Writes what `fill` writes to `path` atomically: into a temporary file beside it, renamed
/// over `path` only when `fill` succeeded; on any error the temporary file is removed. A
/// symbolic link is followed, and a device, FIFO or socket is written into directly (see the
/// module doc).
pub(crate) fn write_atomic_with<E: From<std::io::Error>>(
    path: &Path,
    fill: impl FnOnce(&mut std::fs::File) -> Result<(), E>,
) -> Result<(), E> {
    let path = &follow_links(path)?;
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        let mut f = std::fs::OpenOptions::new().write(true).open(path)?;
        return fill(&mut f);
    }
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "out".into());
    let tmp = dir.join(format!(".{name}.collc-tmp-{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        fill(&mut f)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Where `path` leads once every symbolic link in its last component is followed (a link to a
/// path that does not exist yet leads there, so the file is created behind the link).
fn follow_links(path: &Path) -> std::io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        if !std::fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink()) {
            return Ok(p);
        }
        let link = std::fs::read_link(&p)?;
        p = match p.parent() {
            Some(dir) if link.is_relative() => dir.join(link),
            _ => link,
        };
    }
    Err(std::io::Error::other("too many levels of symbolic links"))
}

/// How diagnostics are printed (`--error-format`, `--color`).
pub(super) struct Out {
    pub format: ErrorFormat,
    pub color: bool,
}

impl Out {
    /// Prints diagnostics on standard error, then (for people) how many errors and warnings.
    pub fn diags(&self, diags: &[Diagnostic], files: &SourceMap) {
        if diags.is_empty() {
            return;
        }
        super::progress::clear(|| self.print(diags, files));
    }

    fn print(&self, diags: &[Diagnostic], files: &SourceMap) {
        match self.format {
            ErrorFormat::Json => {
                let s = render::to_json_lines(diags, files);
                let _ = std::io::stderr().write_all(s.as_bytes());
            }
            ErrorFormat::Human => {
                render::to_stderr(diags, files, self.color);
                let n = diags
                    .iter()
                    .filter(|d| d.severity == Severity::Error)
                    .count();
                let w = diags.len() - n;
                let plural = |k: usize| if k == 1 { "" } else { "s" };
                match (n, w) {
                    (0, w) => eprintln!("{w} warning{} emitted", plural(w)),
                    (n, 0) => eprintln!("{n} error{} found", plural(n)),
                    (n, w) => {
                        eprintln!("{n} error{} and {w} warning{} found", plural(n), plural(w))
                    }
                }
            }
        }
    }
}
