//! Directory outputs (`collc build --target mpi -o DIR`): a target's files written to `DIR`
//! atomically. The project is written in a temporary directory next to `DIR` and renamed into
//! place, so an error never leaves a partial project. An existing `DIR` is replaced only if
//! collc generated it (the target's mark file starts with its mark, e.g. the MPI project's
//! `Cargo.toml` with collc's comment); what it holds besides the target's own files at its top
//! level (`target/`, `Cargo.lock`, a hostfile) is carried over, so a rebuild does not
//! recompile the `mpi` crate.

use std::io;
use std::path::{Path, PathBuf};

/// A directory's files: paths relative to it (with `/`) and their bytes.
pub(super) type Files = [(String, Vec<u8>)];

fn sibling(dir: &Path, what: &str) -> PathBuf {
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    parent.join(format!(".{name}.collc-{what}-{}", std::process::id()))
}

fn write_files(root: &Path, files: &Files) -> io::Result<()> {
    std::fs::create_dir(root)?;
    for (path, bytes) in files {
        let p = root.join(path);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d)?;
        }
        std::fs::write(&p, bytes)?;
        // Scripts (a `#!` first line) are executable.
        #[cfg(unix)]
        if bytes.starts_with(b"#!") {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755))?;
        }
    }
    Ok(())
}

/// Top-level entries of `old` that the project does not write, to carry over.
fn kept(old: &Path, files: &Files) -> io::Result<Vec<std::ffi::OsString>> {
    let ours: Vec<&str> = files
        .iter()
        .map(|(p, _)| p.split('/').next().unwrap_or(p))
        .collect();
    let mut keep = Vec::new();
    for e in std::fs::read_dir(old)? {
        let name = e?.file_name();
        if !ours.iter().any(|o| name == **o) {
            keep.push(name);
        }
    }
    keep.sort();
    Ok(keep)
}

/// Writes `files` to `dir` atomically (see the module doc); an existing `dir` must hold
/// `mark.0` starting with `mark.1`.
pub(super) fn write_dir(dir: &Path, files: &Files, mark: (&str, &str)) -> io::Result<()> {
    let exists = dir.exists();
    // `.` or `..` cannot be renamed; their real path can.
    let real;
    let dir = if exists {
        real = dir.canonicalize()?;
        real.as_path()
    } else {
        dir
    };
    if exists {
        let marked = std::fs::read_to_string(dir.join(mark.0)).unwrap_or_default();
        if !dir.is_dir() || !marked.starts_with(mark.1) {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "it exists and is not a project collc generated; remove it or choose another directory",
            ));
        }
    }
    let tmp = sibling(dir, "tmp");
    let _ = std::fs::remove_dir_all(&tmp);
    if let Err(e) = write_files(&tmp, files) {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    if !exists {
        return std::fs::rename(&tmp, dir).inspect_err(|_| {
            let _ = std::fs::remove_dir_all(&tmp);
        });
    }
    let keep = kept(dir, files)?;
    let mut moved = Vec::new();
    let old = sibling(dir, "old");
    let swap = (|| {
        for k in &keep {
            std::fs::rename(dir.join(k), tmp.join(k))?;
            moved.push(k.clone());
        }
        std::fs::rename(dir, &old)?;
        std::fs::rename(&tmp, dir).inspect_err(|_| {
            let _ = std::fs::rename(&old, dir);
        })
    })();
    if let Err(e) = swap {
        // Put back what was carried over, then drop the new project.
        for k in &moved {
            let _ = std::fs::rename(tmp.join(k), dir.join(k));
        }
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    std::fs::remove_dir_all(&old)
}
