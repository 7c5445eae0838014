//! Document addresses: `file:` URIs to paths and back, and the standard library as files.
//!
//! The checker names files by path (a [`crate::diag::SourceMap`] name), so a document's `file:`
//! URI becomes its path and relative imports resolve against it. Other schemes (VS Code's
//! `untitled:`) keep the URI itself as the name; their relative imports resolve against the
//! server's working directory.
//!
//! Standard library modules are embedded in collc and have no file of their own. For go to
//! definition into them, [`StdlibFiles`] writes each module once per server run (only when the
//! file is missing or differs) to `$XDG_CACHE_HOME/collc/stdlib-VERSION/NAME.coll` (else
//! `~/.cache/...`, else the temporary directory) and answers with that file's `file:` URI, which
//! every client can open. The files are marked read-only: they are copies, edits there change
//! nothing.

use lsp_types::Uri;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The path of a `file:` URI, percent-decoded; `None` for other schemes.
pub fn to_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // `file://host/path` names a host; only the local forms (`file:///p`, `file://localhost/p`)
    // are paths here.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let rest = rest.split(['?', '#']).next().unwrap_or(rest);
    let bytes = decode(rest)?;
    let s = String::from_utf8(bytes).ok()?;
    // `file:///C:/x` is the Windows path `C:/x`.
    let s = match s.as_bytes() {
        [b'/', d, b':', ..] if d.is_ascii_alphabetic() && cfg!(windows) => s[1..].to_string(),
        _ => s,
    };
    Some(PathBuf::from(s))
}

/// The `file:` URI of an absolute path (relative paths are made absolute against the working
/// directory first).
pub fn from_path(path: &Path) -> Option<Uri> {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().ok()?.join(path)
    };
    let s = abs.to_str()?.replace('\\', "/");
    let mut out = String::from("file://");
    if !s.starts_with('/') {
        out.push('/');
    }
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    Uri::from_str(&out).ok()
}

fn decode(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Some(out)
}

/// The name a document gets in the checker's source map: its path for `file:` URIs, else the
/// URI itself.
pub fn source_name(uri: &str) -> String {
    match to_path(uri) {
        Some(p) => p.to_string_lossy().into_owned(),
        None => uri.to_string(),
    }
}

/// The standard library modules as files on disk, written on first use.
#[derive(Debug, Default)]
pub struct StdlibFiles {
    dir: Option<PathBuf>,
    /// Modules already written (or found up to date) in this run, with their URIs.
    written: BTreeMap<String, Option<Uri>>,
}

impl StdlibFiles {
    /// Files go under `dir`, or the default cache directory when `None`.
    pub fn new(dir: Option<PathBuf>) -> StdlibFiles {
        StdlibFiles {
            dir,
            written: BTreeMap::new(),
        }
    }

    fn dir(&self) -> PathBuf {
        if let Some(d) = &self.dir {
            return d.clone();
        }
        let sub = format!("collc/stdlib-{}", env!("CARGO_PKG_VERSION"));
        let cache = std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME")
                    .filter(|v| !v.is_empty())
                    .map(|h| PathBuf::from(h).join(".cache"))
            })
            .unwrap_or_else(std::env::temp_dir);
        cache.join(sub)
    }

    /// The URI of the file holding stdlib module `name`, writing it if needed. `None` when the
    /// module does not exist or the file cannot be written.
    pub fn uri(&mut self, name: &str) -> Option<Uri> {
        if let Some(u) = self.written.get(name) {
            return u.clone();
        }
        let uri = crate::sema::stdlib::get(name).and_then(|text| {
            let dir = self.dir();
            let path = dir.join(format!("{name}.coll"));
            let current = std::fs::read_to_string(&path).ok();
            if current.as_deref() != Some(text) {
                std::fs::create_dir_all(&dir).ok()?;
                // A read-only copy from an earlier version: make it writable to replace it.
                if current.is_some() {
                    let _ = std::fs::remove_file(&path);
                }
                std::fs::write(&path, text).ok()?;
                if let Ok(meta) = std::fs::metadata(&path) {
                    let mut perm = meta.permissions();
                    perm.set_readonly(true);
                    let _ = std::fs::set_permissions(&path, perm);
                }
            }
            from_path(&path)
        });
        self.written.insert(name.to_string(), uri.clone());
        uri
    }

    /// The module name of a source-map name such as `stdlib/ring.coll` (how the checker names
    /// embedded modules).
    pub fn module_of(source_name: &str) -> Option<&str> {
        let m = source_name.strip_prefix("stdlib/")?.strip_suffix(".coll")?;
        crate::sema::stdlib::get(m).map(|_| m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let p = Path::new("/tmp/a b/ü#.coll");
        let u = from_path(p).unwrap();
        assert_eq!(u.as_str(), "file:///tmp/a%20b/%C3%BC%23.coll");
        assert_eq!(to_path(u.as_str()).unwrap(), p);
        assert_eq!(
            to_path("file:///x/%3Ay.coll").unwrap(),
            Path::new("/x/:y.coll")
        );
        assert_eq!(to_path("untitled:Untitled-1"), None);
        assert_eq!(source_name("untitled:Untitled-1"), "untitled:Untitled-1");
    }

    #[test]
    fn stdlib_names() {
        assert_eq!(StdlibFiles::module_of("stdlib/ring.coll"), Some("ring"));
        assert_eq!(StdlibFiles::module_of("/x/stdlib/ring.coll"), None);
        assert_eq!(StdlibFiles::module_of("stdlib/nope.coll"), None);
    }
}
