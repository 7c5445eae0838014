//! `textDocument/completion`: keywords, names in scope, standard library modules and
//! generators, the properties of the enclosing block with their allowed words, and stage
//! encodings in `stages: [...]`.
//!
//! The context comes from the tokens before the cursor, not from the tree, because the text is
//! usually half typed when completion is asked for: a stack of open `{` blocks, each labelled by
//! the declaration that opened it (`collective`, `schedule ring`, `model m: loggp`, `target
//! msccl`, or code), and the tokens of the current statement. Names come from the index of the
//! latest analysis. A standard library generator whose module is not imported yet comes with an
//! edit that adds the `import`.

mod context;
mod names;
mod values;

use super::ReqError;
use crate::lsp::engine::Engine;
use crate::lsp::text::LineIndex;
use crate::sema::model::{CollectiveKind, CostModelKind, TargetKind};
use crate::sema::{elab, eval, schedule, stdlib};
use crate::syntax::lexer::KEYWORDS;
use context::{context, keys};
use lsp_types::{CompletionItem, CompletionItemKind, CompletionParams, CompletionResponse};
use names::{generators, models, names, scanned_names};
use values::{stages, value_words};

/// The block the cursor is in.
#[derive(Debug, Clone, PartialEq)]
enum Block {
    Top,
    /// A generator, topology, `for` or `if` body.
    Code,
    Collective,
    Schedule(String),
    Model(String),
    Target(String),
}

/// What to offer.
#[derive(Debug, PartialEq)]
enum Want {
    ItemKeywords,
    StmtKeywords,
    Modules,
    Families,
    Collectives,
    Targets,
    ModelKinds,
    Types,
    Generators,
    LinkAttrs,
    Keys(Block),
    Value(Block, String),
    Stages,
    Names,
}

use crate::syntax::lexer::ITEM_KEYWORDS;
const STMT_KEYWORDS: &[&str] = &["compute", "switch", "link", "for", "if", "let", "use"];

pub fn handle(e: &mut Engine, p: CompletionParams) -> Result<Option<CompletionResponse>, ReqError> {
    let pos = p.text_document_position;
    let uri = pos.text_document.uri;
    let an = e.analysis(&uri)?;
    let ranks = e.docs.get(&uri).and_then(|d| d.last_ranks);
    let text = an.text();
    let lines = LineIndex::new(text);
    let offset = lines.offset(text, pos.position);
    let word_start = text[..offset]
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_ascii_alphanumeric() || *c == '_')
        .last()
        .map(|(i, _)| i)
        .unwrap_or(offset);
    let want = context(&text[..word_start]);
    let mut items: Vec<CompletionItem> = Vec::new();
    let kw = |w: &str, detail: &str| item(w, CompletionItemKind::KEYWORD, detail);
    match &want {
        Want::ItemKeywords => items.extend(ITEM_KEYWORDS.iter().map(|k| kw(k, "declaration"))),
        Want::StmtKeywords => {
            items.extend(STMT_KEYWORDS.iter().map(|k| kw(k, "statement")));
        }
        Want::Modules => {
            for m in stdlib::names() {
                items.push(item(
                    m,
                    CompletionItemKind::MODULE,
                    "standard library module",
                ));
            }
        }
        Want::Families => {
            for (f, props) in schedule::FAMILIES {
                let d = if props.is_empty() {
                    "schedule family".to_string()
                } else {
                    format!("schedule family; properties: {}", props.join(", "))
                };
                items.push(item(f, CompletionItemKind::ENUM_MEMBER, &d));
            }
        }
        Want::Collectives => words(
            &mut items,
            CollectiveKind::ALL.iter().map(|k| k.0),
            "collective",
        ),
        Want::Targets => words(&mut items, TargetKind::ALL.iter().map(|k| k.0), "target"),
        Want::ModelKinds => words(
            &mut items,
            CostModelKind::ALL.iter().map(|k| k.0),
            "cost model",
        ),
        Want::Types => words(&mut items, elab::TYPES.iter().copied(), "type"),
        Want::LinkAttrs => words(
            &mut items,
            ["latency", "parallel"].into_iter(),
            "link attribute",
        ),
        Want::Generators => generators(&an, &mut items),
        Want::Keys(b) => {
            for k in keys(b) {
                items.push(item(k, CompletionItemKind::PROPERTY, "property"));
            }
        }
        Want::Stages => stages(ranks, &mut items),
        Want::Value(b, key) => {
            value_words(b, key, &mut items);
            if key == "model" {
                models(&an, &mut items);
            } else {
                names(&an, word_start, &mut items);
                items.extend(scanned_names(&text[..word_start]));
            }
        }
        Want::Names => {
            names(&an, word_start, &mut items);
            items.extend(scanned_names(&text[..word_start]));
            words(
                &mut items,
                eval::BUILTINS.iter().copied(),
                "built-in function",
            );
            for k in ["true", "false", "auto"] {
                items.push(kw(k, "literal"));
            }
        }
    }
    // Keywords the lexer knows are never offered as names.
    items.retain(|i| {
        i.kind == Some(CompletionItemKind::KEYWORD) || !KEYWORDS.contains(&i.label.as_str())
    });
    let mut seen = std::collections::HashSet::new();
    items.retain(|i| seen.insert(i.label.clone()));
    Ok(Some(CompletionResponse::Array(items)))
}

fn item(label: &str, kind: CompletionItemKind, detail: &str) -> CompletionItem {
    CompletionItem {
        label: label.to_string(),
        kind: Some(kind),
        detail: (!detail.is_empty()).then(|| detail.to_string()),
        ..Default::default()
    }
}

fn words<'w>(items: &mut Vec<CompletionItem>, ws: impl Iterator<Item = &'w str>, detail: &str) {
    items.extend(ws.map(|w| item(w, CompletionItemKind::ENUM_MEMBER, detail)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contexts() {
        assert_eq!(context(""), Want::ItemKeywords);
        assert_eq!(context("import "), Want::Modules);
        assert_eq!(context("x;\nschedule "), Want::Families);
        assert_eq!(context("topology t = "), Want::Generators);
        assert_eq!(context("generator g(n: "), Want::Types);
        assert_eq!(
            context("collective allreduce {\n  "),
            Want::Keys(Block::Collective)
        );
        assert_eq!(
            context("collective allreduce { dtype: "),
            Want::Value(Block::Collective, "dtype".into())
        );
        assert_eq!(
            context("schedule recursive_multiplying { stages: [a2, "),
            Want::Stages
        );
        assert_eq!(context("topology t { compute x[2]; "), Want::StmtKeywords);
        assert_eq!(
            context("topology t { link a <-> b : 1 GB/s, "),
            Want::LinkAttrs
        );
        assert_eq!(context("let x = 1 + "), Want::Names);
        assert_eq!(context("model m: "), Want::ModelKinds);
    }
}
