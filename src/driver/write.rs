//! Files written atomically: a temporary file beside the output, renamed over it only once
//! everything is written, so that collc never leaves a partial output file behind (the command
//! line's `-o`, Python's `out=`).
//!
//! A write behaves like a shell redirection where rename would do harm: a symbolic link is
//! followed (the link stays, its target is replaced), and an existing path that is not a
//! regular file or directory (`/dev/null`, `/dev/stdout`, a FIFO, a socket) is written into
//! directly. Renaming over such a path would replace the device with a regular file: run as
//! root, `collc build -o /dev/null` used to turn `/dev/null` into a file for every program on
//! the machine. Temporaries are named and cleaned up by [`super::temps`].

use super::temps;
use std::io::Write;
use std::path::{Path, PathBuf};

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
    temps::remove_stale(path);
    let tmp = temps::sibling(path, "tmp");
    let created = temps::guarded(|r| {
        r.register(&tmp);
        std::fs::File::create(&tmp)
    });
    let result = created.map_err(E::from).and_then(|mut f| {
        fill(&mut f)?;
        f.sync_all()?;
        temps::guarded(|r| {
            let renamed = std::fs::rename(&tmp, path);
            if renamed.is_ok() {
                r.unregister(&tmp);
            }
            renamed
        })?;
        Ok(())
    });
    if result.is_err() {
        temps::guarded(|r| {
            let _ = std::fs::remove_file(&tmp);
            r.unregister(&tmp);
        });
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
