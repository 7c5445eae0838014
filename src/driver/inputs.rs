//! What kind of input a path holds, and which files a directory given to `collc check` holds.
//!
//! A file is typed by its extension (`.coll`, `.xml` for MSCCL XML, `.ir` for IR text, `.goal`
//! for GOAL); with another extension or none, by its first words: `<` opens XML, `collc-ir`
//! IR text, `num_ranks` GOAL, and a top-level keyword of the language (`topology`, `param`,
//! `collective`, ...) after any comments a `.coll` file. Anything else is not collc's: named
//! on the command line it is refused with E0029. A directory stands for the files under it
//! (subdirectories too, except hidden ones, `target` and `node_modules`) that have one of the
//! four extensions, or no extension and a recognised content; the others are skipped and
//! counted in a note. Files are visited in byte order of their names, so the output is the
//! same on every machine.

use crate::diag::{Code, Diagnostic, SourceMap, Span};
use std::path::{Path, PathBuf};

/// The kinds of file collc reads.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    Coll,
    Xml,
    Ir,
    Goal,
}

/// The kind an extension names, if it names one.
fn by_extension(path: &Path) -> Option<Kind> {
    match path.extension()?.to_str()? {
        "coll" => Some(Kind::Coll),
        "xml" => Some(Kind::Xml),
        "ir" => Some(Kind::Ir),
        "goal" => Some(Kind::Goal),
        _ => None,
    }
}

// Items that may open a `.coll` file.
use crate::syntax::lexer::ITEM_KEYWORDS as COLL_ITEMS;

/// The text after leading white space and `//` and `/* */` comments.
fn after_comments(mut t: &str) -> &str {
    loop {
        t = t.trim_start();
        if let Some(rest) = t.strip_prefix("//") {
            t = rest.split_once('\n').map_or("", |x| x.1);
        } else if let Some(rest) = t.strip_prefix("/*") {
            t = rest.split_once("*/").map_or("", |x| x.1);
        } else {
            return t;
        }
    }
}

/// The kind a text looks like, from its first words.
pub(crate) fn sniff(text: &str) -> Option<Kind> {
    let t = text.trim_start_matches('\u{feff}');
    if t.trim_start().starts_with('<') {
        return Some(Kind::Xml);
    }
    let first_word = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
            .collect()
    };
    if first_word(t.trim_start()) == "collc-ir" {
        return Some(Kind::Ir);
    }
    let word = first_word(after_comments(t));
    if word == "num_ranks" {
        return Some(Kind::Goal);
    }
    COLL_ITEMS.contains(&word.as_str()).then_some(Kind::Coll)
}

/// The kind of `path` whose text is `text`: its extension's, else what the text looks like.
pub(crate) fn kind(path: &Path, text: &str) -> Option<Kind> {
    by_extension(path).or_else(|| sniff(text))
}

/// The first [`HEAD`] bytes of a file without an extension, as text (None when they are not
/// UTF-8 or hold a NUL byte): what [`sniff`] types it by. Only the head is read, so that a
/// large or endless file met in a directory costs a block (issue 41).
fn head(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(HEAD)
        .read_to_end(&mut bytes)
        .ok()?;
    if bytes.contains(&0) {
        return None;
    }
    let valid = match std::str::from_utf8(&bytes) {
        Ok(_) => bytes.len(),
        // A character cut by the end of the head.
        Err(e) if e.error_len().is_none() => e.valid_up_to(),
        Err(_) => return None,
    };
    bytes.truncate(valid);
    String::from_utf8(bytes).ok()
}

/// Bytes of a file [`head`] reads.
const HEAD: u64 = 1 << 16;

/// Directories a walk does not enter: build output and installed packages.
const NOT_ENTERED: &[&str] = &["target", "node_modules"];

/// The files a command-line argument stands for: itself, or the files collc reads under a
/// directory (see the module doc); with a note counting the files skipped in a directory.
pub(crate) fn expand(path: &Path) -> Result<(Vec<PathBuf>, Option<String>), std::io::Error> {
    if !path.is_dir() {
        return Ok((vec![path.to_path_buf()], None));
    }
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    walk(path, &mut files, &mut skipped)?;
    let mut note = None;
    if !skipped.is_empty() {
        let n = skipped.len();
        let shown: Vec<String> = skipped
            .iter()
            .take(5)
            .map(|p| p.display().to_string())
            .collect();
        let more = if n > 5 {
            format!(" and {} more", n - 5)
        } else {
            String::new()
        };
        note = Some(format!(
            "note: skipped {} under `{}` that collc does not read: {}{more}",
            crate::diag::counted(n as u64, "file"),
            path.display(),
            shown.join(", "),
        ));
    }
    Ok((files, note))
}

/// Collects, in byte order of names, the files under `dir` with a known extension or with no
/// extension and a recognised content; hidden entries and [`NOT_ENTERED`] are left out.
fn walk(dir: &Path, files: &mut Vec<PathBuf>, skipped: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for p in entries {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name.starts_with('.') {
            continue;
        }
        if p.is_dir() {
            if !NOT_ENTERED.contains(&name.as_str()) {
                walk(&p, files, skipped)?;
            }
            continue;
        }
        let known = by_extension(&p).is_some()
            || (p.extension().is_none() && head(&p).is_some_and(|t| sniff(&t).is_some()));
        if known {
            files.push(p);
        } else {
            skipped.push(p);
        }
    }
    Ok(())
}

/// E0029 for a file collc cannot tell the kind of (`file` holds its text).
pub(crate) fn unknown(files: &SourceMap, file: crate::diag::FileId) -> Diagnostic {
    let f = files.get(file);
    let end = f.text.find('\n').unwrap_or(f.text.len());
    Diagnostic::error(
        Code::Io,
        Span::new(file, 0, end),
        format!(
            "`{}` is not a file collc reads: neither its extension nor its first words say what it is",
            f.name
        ),
    )
    .label("not .coll, MSCCL XML, IR or GOAL text")
    .help("collc reads `.coll` files, MSCCL XML (`.xml`), IR text (`.ir`) and GOAL (`.goal`); give the file one of these extensions, or leave it out")
}

/// E0029 for a directory that cannot be listed or holds nothing to check.
pub(crate) fn dir_error(files: &mut SourceMap, dir: &Path, what: String) -> Diagnostic {
    let f = files.add(dir.display().to_string(), String::new());
    Diagnostic::error(
        Code::Io,
        Span::new(f, 0, 0),
        format!("the directory `{}` {what}", dir.display()),
    )
    .label("nothing to check")
    .help("name files or a directory that holds `.coll`, `.xml`, `.ir` or `.goal` files")
}

#[cfg(test)]
mod tests {
    use super::{Kind, sniff};

    #[test]
    fn sniffs_each_kind() {
        assert_eq!(sniff("<algo name=\"x\">"), Some(Kind::Xml));
        assert_eq!(sniff("  <?xml version=\"1.0\"?>\n<algo>"), Some(Kind::Xml));
        assert_eq!(sniff("collc-ir 1\nname \"x\"\n"), Some(Kind::Ir));
        assert_eq!(sniff("// a GOAL file\nnum_ranks 2\n"), Some(Kind::Goal));
        assert_eq!(
            sniff("// ring\n/* eight */ param n: int = 8;\n"),
            Some(Kind::Coll)
        );
        assert_eq!(sniff("topology t { compute h[2]; }"), Some(Kind::Coll));
        assert_eq!(sniff("//! docs\nuse std::io;\nfn main() {}\n"), None);
        assert_eq!(sniff("[package]\nname = \"x\"\n"), None);
        assert_eq!(sniff(""), None);
    }
}
