//! Completion of names: declared names visible at the cursor (from the index), names scanned from
//! the text when there is no analysis yet, cost models, and generators (a standard library
//! generator not imported yet comes with the edit that adds its `import`).

use super::item;
use crate::lsp::describe;
use crate::lsp::index::DefKind;
use crate::lsp::text::LineIndex;
use crate::sema::stdlib;
use crate::syntax::ast::Item;
use crate::syntax::lexer::{Token, lex};
use crate::syntax::parse;
use lsp_types::{CompletionItem, CompletionItemKind, Position, Range, TextEdit};

/// Declared names visible at `offset`.
pub(super) fn names(
    an: &crate::lsp::analysis::Analysis,
    offset: usize,
    items: &mut Vec<CompletionItem>,
) {
    let nav = an.nav();
    for d in nav.index.visible_at(an.main, offset) {
        let def = &nav.index.defs[d];
        let kind = match def.kind {
            DefKind::Generator => continue,
            DefKind::GenParam | DefKind::LocalLet | DefKind::LoopVar | DefKind::Let => {
                CompletionItemKind::VARIABLE
            }
            DefKind::Param => CompletionItemKind::CONSTANT,
            DefKind::Compute | DefKind::Switch | DefKind::Instance => CompletionItemKind::FIELD,
            DefKind::Topology | DefKind::CostModel => continue,
        };
        items.push(item(&def.name, kind, def.kind.word()));
    }
}

/// Names declared before the cursor in the blocks still open at it, read from the tokens: a
/// half-typed body does not parse, so the index may not have them yet.
pub(super) fn scanned_names(before: &str) -> Vec<CompletionItem> {
    let toks: Vec<Token<'_>> = lex(before)
        .into_iter()
        .filter_map(|(_, t, _)| t.ok())
        .filter(|t| !matches!(t, Token::Comment(_)))
        .collect();
    let mut scopes: Vec<Vec<(&str, &str)>> = vec![Vec::new()];
    // Generator parameters and loop variables belong to the block that follows them.
    let mut pending: Vec<(&str, &str)> = Vec::new();
    let mut in_params = false;
    for (i, t) in toks.iter().enumerate() {
        let prev = i.checked_sub(1).map(|p| &toks[p]);
        let next = toks.get(i + 1);
        match t {
            Token::LBrace => {
                scopes.push(std::mem::take(&mut pending));
                in_params = false;
            }
            Token::RBrace if scopes.len() > 1 => {
                scopes.pop();
            }
            Token::LParen
                if matches!(prev, Some(Token::Ident(_)))
                    && i >= 2
                    && toks[i - 2] == Token::Generator =>
            {
                in_params = true;
            }
            Token::RParen => in_params = false,
            Token::Ident(n) => {
                let what = match (prev, next) {
                    (Some(Token::Let), _) => Some("let"),
                    (Some(Token::Param), _) => Some("param"),
                    (Some(Token::Compute), _) => Some("compute node array"),
                    (Some(Token::Switch), _) => Some("switch array"),
                    (Some(Token::As), _) => Some("generator instance"),
                    (Some(Token::For), _) => {
                        pending.push((n, "loop variable"));
                        None
                    }
                    (Some(Token::LParen | Token::Comma), Some(Token::Colon)) if in_params => {
                        pending.push((n, "generator parameter"));
                        None
                    }
                    _ => None,
                };
                if let (Some(w), Some(s)) = (what, scopes.last_mut()) {
                    s.push((n, w));
                }
            }
            _ => {}
        }
    }
    scopes
        .into_iter()
        .flatten()
        .map(|(n, w)| item(n, CompletionItemKind::VARIABLE, w))
        .collect()
}

pub(super) fn models(an: &crate::lsp::analysis::Analysis, items: &mut Vec<CompletionItem>) {
    let nav = an.nav();
    for def in nav
        .index
        .defs
        .iter()
        .filter(|d| d.kind == DefKind::CostModel)
    {
        items.push(item(&def.name, CompletionItemKind::STRUCT, "cost model"));
    }
}

/// Generators declared or imported, then those of standard library modules not imported yet
/// (with the `import` added on accept).
pub(super) fn generators(an: &crate::lsp::analysis::Analysis, items: &mut Vec<CompletionItem>) {
    let nav = an.nav();
    for def in nav
        .index
        .defs
        .iter()
        .filter(|d| d.kind == DefKind::Generator)
    {
        let text = &an.sources.get(def.decl_span.file).text;
        items.push(item(
            &def.name,
            CompletionItemKind::FUNCTION,
            &describe::head(text, def.decl_span),
        ));
    }
    let text = an.text();
    let tree = an.tree();
    let imported: Vec<String> = tree
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Import {
                path: crate::syntax::ast::ImportPath::Std(id),
                ..
            } => Some(id.name.clone()),
            _ => None,
        })
        .collect();
    // Where a new import goes: after the last import, else before the first declaration.
    let at = tree
        .items
        .iter()
        .rfind(|i| matches!(i, Item::Import { .. }))
        .map(|i| i.span().end as usize)
        .map(|end| {
            text[end..]
                .find('\n')
                .map(|n| end + n + 1)
                .unwrap_or(text.len())
        })
        .or_else(|| tree.items.first().map(|i| i.span().start as usize))
        .unwrap_or(0);
    let lines = LineIndex::new(text);
    let pos: Position = lines.position(text, at);
    let pos = Position::new(pos.line, 0);
    for m in stdlib::names().filter(|m| !imported.iter().any(|i| i == m)) {
        let Some(src) = stdlib::get(m) else { continue };
        let (tree, _) = parse(crate::diag::FileId(0), src);
        for i in &tree.items {
            if let Item::Generator { name, span, .. } = i {
                let mut it = item(
                    &name.name,
                    CompletionItemKind::FUNCTION,
                    &format!("{} (adds `import {m};`)", describe::head(src, *span)),
                );
                it.additional_text_edits = Some(vec![TextEdit::new(
                    Range::new(pos, pos),
                    format!("import {m};\n"),
                )]);
                items.push(it);
            }
        }
    }
}
