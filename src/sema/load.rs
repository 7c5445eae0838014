//! Loading: parses the main file and, depth first, everything it imports (the standard library
//! from its embedded copy), reporting import cycles, and orders the files by dependency.

use super::Loaded;
use crate::diag::{Code, Diagnostic, FileId, SourceMap, Span};
use crate::syntax::{self, ast};
use std::path::{Path, PathBuf};

/// Parses `file` and, depth first, everything it imports; `loaded` ends in dependency order.
pub(super) fn load(
    sources: &mut SourceMap,
    file: FileId,
    loaded: &mut Vec<Loaded>,
    loading: &mut Vec<FileId>,
    diags: &mut Vec<Diagnostic>,
) {
    let text = sources.get(file).text.clone();
    let (tree, errs) = syntax::parse(file, &text);
    diags.extend(errs);
    loading.push(file);
    for item in &tree.items {
        let ast::Item::Import { path, span } = item else {
            continue;
        };
        let (name, text) = match path {
            ast::ImportPath::Std(id) => match super::stdlib::get(&id.name) {
                Some(t) => (format!("stdlib/{}.coll", id.name), t.to_string()),
                None => {
                    let names: Vec<&str> = super::stdlib::names().collect();
                    let d = Diagnostic::error(
                        Code::ImportNotFound,
                        id.span,
                        format!("no standard library module `{}`", id.name),
                    )
                    .label("not in the standard library");
                    let d = match super::suggest::closest(&id.name, names.iter().copied()) {
                        Some(s) => d.help(format!("did you mean `{s}`?")),
                        None => d.help(format!(
                            "modules: {}; import a file with `import \"path.coll\";`",
                            names.join(", ")
                        )),
                    };
                    diags.push(d);
                    continue;
                }
            },
            ast::ImportPath::File(p, pspan) => {
                let base = Path::new(&sources.get(file).name)
                    .parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_default();
                let full: PathBuf = normalize(&base.join(p));
                let shown = full.to_string_lossy().to_string();
                if let Some(existing) = find_file(sources, &full) {
                    again(sources, existing, *pspan, loaded, loading, diags);
                    continue;
                }
                match std::fs::read_to_string(&full) {
                    Ok(t) => (shown, t),
                    Err(e) => {
                        let (message, label) = match e.kind() {
                            std::io::ErrorKind::NotFound => {
                                (format!("there is no file `{shown}` to import"), "not found")
                            }
                            _ => (format!("cannot read `{shown}`: {e}"), "unreadable"),
                        };
                        diags.push(
                            Diagnostic::error(Code::ImportNotFound, *pspan, message)
                                .label(label)
                                .help(if base.as_os_str().is_empty() {
                                    "paths are relative to the importing file's directory, here the current directory".to_string()
                                } else {
                                    format!("paths are relative to the importing file's directory, here `{}`", base.display())
                                }),
                        );
                        continue;
                    }
                }
            }
        };
        if let Some(existing) = sources.find(&name) {
            again(sources, existing, *span, loaded, loading, diags);
            continue;
        }
        let id = sources.add(name, text);
        load(sources, id, loaded, loading, diags);
    }
    loading.pop();
    loaded.push(Loaded { file, ast: tree });
}

/// A file already in `sources` imported again (at `span`): an import cycle when it is being
/// loaded, nothing when this check loaded it already, else loaded from the text it has (a
/// source map that checks the same file twice, as `collc compare --vary` does, keeps one copy).
fn again(
    sources: &mut SourceMap,
    existing: FileId,
    span: Span,
    loaded: &mut Vec<Loaded>,
    loading: &mut Vec<FileId>,
    diags: &mut Vec<Diagnostic>,
) {
    if let Some(d) = cycle(sources, loading, existing, span) {
        diags.push(d);
    } else if !loaded.iter().any(|l| l.file == existing) {
        load(sources, existing, loaded, loading, diags);
    }
}

/// The import cycle closed by importing `f` (at `span`) while `loading` is being loaded, if any.
fn cycle(sources: &SourceMap, loading: &[FileId], f: FileId, span: Span) -> Option<Diagnostic> {
    let at = loading.iter().position(|x| *x == f)?;
    let name = |id: FileId| format!("`{}`", sources.get(id).name);
    let chain: Vec<String> = loading[at..]
        .iter()
        .chain(std::iter::once(&f))
        .map(|id| name(*id))
        .collect();
    let message = if chain.len() == 2 {
        format!("{} imports itself", name(f))
    } else {
        format!(
            "import cycle: {} imports {}",
            chain[0],
            chain[1..].join(", which imports ")
        )
    };
    Some(
        Diagnostic::error(Code::ImportCycle, span, message)
            .label(format!("{} is already being imported", name(f)))
            .help(
                "move the definitions both files need into a third file, and import that from each",
            ),
    )
}

/// Removes `.` components and resolves `..` against the components before it, so that one file
/// has one name however an import spells its path.
fn normalize(p: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                let last = out.components().next_back();
                if matches!(last, Some(Component::Normal(_))) {
                    out.pop();
                } else if !matches!(last, Some(Component::RootDir | Component::Prefix(_))) {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The loaded file that is `path`: the same normalized name, or the same file on disk.
fn find_file(sources: &SourceMap, path: &Path) -> Option<FileId> {
    let canonical = std::fs::canonicalize(path).ok();
    (0..sources.len() as u32).map(FileId).find(|id| {
        let name = Path::new(&sources.get(*id).name);
        normalize(name) == path
            || canonical
                .as_ref()
                .is_some_and(|c| std::fs::canonicalize(name).ok().as_ref() == Some(c))
    })
}
