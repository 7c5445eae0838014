//! One analysis of one version of a document: the checker's result, plus (built on first use)
//! the parsed trees and the name index for navigation.
//!
//! Diagnostics come from [`crate::sema::check`], the same call `collc check` makes, on the
//! editor's text: the document is added to a fresh [`SourceMap`] under its path, so relative
//! imports resolve against its directory (imported files are read from disk, not from other
//! open editors) and standard library modules come from the copies embedded in collc.

use super::index::Index;
use crate::diag::{Code, Diagnostic, FileId, SourceMap};
use crate::sema::{self, model::Model};
use crate::syntax::{self, ast};
use std::cell::OnceCell;

/// The checked state of one document version.
pub struct Analysis {
    pub version: i32,
    pub sources: SourceMap,
    pub main: FileId,
    pub diagnostics: Vec<Diagnostic>,
    /// The elaborated model, when the file has no errors.
    pub model: Option<Model>,
    /// Whether the text has lexical or syntax errors.
    pub syntax_errors: bool,
    nav: OnceCell<Nav>,
}

/// Parsed trees of the document and its imports, and their index.
pub struct Nav {
    pub trees: Vec<(FileId, ast::File)>,
    pub index: Index,
}

impl Analysis {
    /// Checks `text` as the file `name` (a path, or the URI of an unsaved document).
    pub fn new(name: &str, text: &str, version: i32, opts: &sema::Options) -> Analysis {
        let mut sources = SourceMap::new();
        let main = sources.add(name, text);
        let checked = sema::check(&mut sources, main, opts);
        let syntax_errors = checked
            .diagnostics
            .iter()
            .any(|d| d.primary.span.file == main && is_syntax(d.code));
        Analysis {
            version,
            sources,
            main,
            diagnostics: checked.diagnostics,
            model: checked.model,
            syntax_errors,
            nav: OnceCell::new(),
        }
    }

    /// The document's text.
    pub fn text(&self) -> &str {
        &self.sources.get(self.main).text
    }

    /// Trees and index, built on first use.
    pub fn nav(&self) -> &Nav {
        self.nav.get_or_init(|| {
            let mut trees = Vec::new();
            let ids = (0..self.sources.len() as u32)
                .map(FileId)
                .filter(|f| *f != self.main)
                .chain(std::iter::once(self.main));
            for f in ids {
                let (tree, _) = syntax::parse(f, &self.sources.get(f).text);
                trees.push((f, tree));
            }
            let index = Index::build(&self.sources, &trees, self.main);
            Nav { trees, index }
        })
    }

    /// The tree of the document itself.
    pub fn tree(&self) -> &ast::File {
        let nav = self.nav();
        nav.trees
            .iter()
            .find(|(f, _)| *f == self.main)
            .map(|(_, t)| t)
            .unwrap_or(&EMPTY)
    }
}

static EMPTY: ast::File = ast::File { items: Vec::new() };

/// Codes that mean the text did not lex or parse.
pub fn is_syntax(code: Code) -> bool {
    matches!(code, Code::Syntax | Code::InvalidToken)
}
