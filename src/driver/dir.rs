//! Directory outputs (`collc build --target mpi -o DIR`): a target's files written to `DIR`
//! atomically. The project is written in a temporary directory next to `DIR` and renamed into
//! place, so an error never leaves a partial project. An existing `DIR` is replaced only if
//! collc generated it (the target's mark file starts with its mark, e.g. the MPI project's
//! `Cargo.toml` with collc's comment); what it holds besides the target's own files at its top
//! level (`target/`, `Cargo.lock`, a hostfile) is carried over, so a rebuild does not
//! recompile the `mpi` crate. The temporaries (`.DIR.collc-tmp-PID`, and `.DIR.collc-old-PID`
//! for the project being replaced) are registered with [`temps`], which removes them on a
//! signal, and those a killed process left on the next build of `DIR`.

use super::temps;
use std::io::{self, Write};
use std::path::Path;

/// A directory's files: paths relative to it (with `/`) and their bytes.
pub(crate) type Files = [(String, Vec<u8>)];

/// Writes `files` into a new directory `root`, a registered temporary: each path is created
/// under [`temps::guarded`], so none appears once a signal handler has removed `root`.
fn write_files(root: &Path, files: &Files) -> io::Result<()> {
    temps::guarded(|r| {
        r.register(root);
        std::fs::create_dir(root)
    })?;
    for (path, bytes) in files {
        let p = root.join(path);
        let mut f = temps::guarded(|_| {
            if let Some(d) = p.parent() {
                std::fs::create_dir_all(d)?;
            }
            std::fs::File::create(&p)
        })?;
        f.write_all(bytes)?;
        // Scripts (a `#!` first line) are executable.
        #[cfg(unix)]
        if bytes.starts_with(b"#!") {
            use std::os::unix::fs::PermissionsExt;
            f.set_permissions(std::fs::Permissions::from_mode(0o755))?;
        }
    }
    Ok(())
}

/// Removes the temporary `path` and forgets it.
fn discard(path: &Path) {
    temps::guarded(|r| {
        let _ = std::fs::remove_dir_all(path);
        r.unregister(path);
    });
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
pub(crate) fn write_dir(dir: &Path, files: &Files, mark: (&str, &str)) -> io::Result<()> {
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
    temps::remove_stale(dir);
    let tmp = temps::sibling(dir, "tmp");
    if let Err(e) = write_files(&tmp, files) {
        discard(&tmp);
        return Err(e);
    }
    if !exists {
        let renamed = temps::guarded(|r| {
            let renamed = std::fs::rename(&tmp, dir);
            if renamed.is_ok() {
                r.unregister(&tmp);
            }
            renamed
        });
        if renamed.is_err() {
            discard(&tmp);
        }
        return renamed;
    }
    let keep = match kept(dir, files) {
        Ok(k) => k,
        Err(e) => {
            discard(&tmp);
            return Err(e);
        }
    };
    let old = temps::sibling(dir, "old");
    // The swap runs as one guarded step: a signal never finds what is carried over in `tmp`.
    let swap = temps::guarded(|r| {
        let mut moved = Vec::new();
        let swapped = (|| {
            for k in &keep {
                std::fs::rename(dir.join(k), tmp.join(k))?;
                moved.push(k.clone());
            }
            std::fs::rename(dir, &old)?;
            std::fs::rename(&tmp, dir).inspect_err(|_| {
                let _ = std::fs::rename(&old, dir);
            })
        })();
        match swapped {
            Ok(()) => {
                r.unregister(&tmp);
                r.register(&old);
            }
            // Put back what was carried over; the caller drops the new project.
            Err(_) => {
                for k in &moved {
                    let _ = std::fs::rename(tmp.join(k), dir.join(k));
                }
            }
        }
        swapped
    });
    if let Err(e) = swap {
        discard(&tmp);
        return Err(e);
    }
    let removed = std::fs::remove_dir_all(&old);
    temps::guarded(|r| r.unregister(&old));
    removed
}
