//! Where the command line's output goes: standard output, or a file written atomically (a
//! temporary file beside it, renamed over it only once everything is written), so that collc
//! never leaves a partial output file behind.

use crate::diag::Code;
use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` atomically (temporary file and rename), or to stdout.
pub(crate) fn write_output(path: Option<&Path>, bytes: &[u8]) -> i32 {
    match path {
        None => match std::io::stdout().write_all(bytes) {
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
/// over `path` only when `fill` succeeded; on any error the temporary file is removed.
pub(crate) fn write_atomic_with<E: From<std::io::Error>>(
    path: &Path,
    fill: impl FnOnce(&mut std::fs::File) -> Result<(), E>,
) -> Result<(), E> {
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
