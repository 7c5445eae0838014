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

use super::ReqError;
use crate::lsp::describe;
use crate::lsp::engine::Engine;
use crate::lsp::index::DefKind;
use crate::lsp::text::LineIndex;
use crate::sema::model::{
    CollectiveKind, CostModelKind, Dtype, LeaderPolicy, ReduceOp, TargetKind,
};
use crate::sema::{collective, decls, elab, eval, schedule, stdlib};
use crate::syntax::ast::Item;
use crate::syntax::lexer::{KEYWORDS, Token, lex};
use crate::syntax::parse;
use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionParams, CompletionResponse, Position, Range,
    TextEdit,
};

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

const ITEM_KEYWORDS: &[&str] = &[
    "import",
    "param",
    "let",
    "generator",
    "topology",
    "collective",
    "schedule",
    "model",
    "target",
];
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

/// Reads the context from the text before the word being typed.
fn context(before: &str) -> Want {
    let mut stack: Vec<Block> = Vec::new();
    let mut cur: Vec<Token<'_>> = Vec::new();
    for (_, tok, _) in lex(before) {
        let Ok(t) = tok else { continue };
        match t {
            Token::Comment(_) => {}
            Token::LBrace => {
                stack.push(block_of(&cur));
                cur.clear();
            }
            Token::RBrace => {
                stack.pop();
                cur.clear();
            }
            Token::Semi => cur.clear(),
            t => cur.push(t),
        }
    }
    let block = stack.last().cloned().unwrap_or(Block::Top);
    let in_list = cur.iter().filter(|t| **t == Token::LBracket).count()
        > cur.iter().filter(|t| **t == Token::RBracket).count();
    match (&block, cur.as_slice()) {
        (Block::Top, []) => Want::ItemKeywords,
        (Block::Top, [Token::Import]) => Want::Modules,
        (Block::Top, [Token::Schedule]) => Want::Families,
        (Block::Top, [Token::Collective]) => Want::Collectives,
        (Block::Top, [Token::Target]) => Want::Targets,
        (Block::Top, [Token::Model, Token::Ident(_), Token::Colon]) => Want::ModelKinds,
        (Block::Top, [Token::Topology, Token::Ident(_), Token::Eq]) => Want::Generators,
        (Block::Top, [Token::Param, Token::Ident(_), Token::Colon]) => Want::Types,
        (Block::Top, [Token::Generator, ..]) if cur.last() == Some(&Token::Colon) => Want::Types,
        (Block::Code, []) => Want::StmtKeywords,
        (Block::Code, [Token::Use]) => Want::Generators,
        (Block::Code, [Token::Link, rest @ ..])
            if rest.contains(&Token::Colon) && rest.last() == Some(&Token::Comma) =>
        {
            Want::LinkAttrs
        }
        (Block::Collective | Block::Schedule(_) | Block::Model(_) | Block::Target(_), []) => {
            Want::Keys(block)
        }
        (Block::Schedule(_), [Token::Ident("stages"), Token::Colon, ..]) if in_list => Want::Stages,
        (
            Block::Collective | Block::Schedule(_) | Block::Model(_) | Block::Target(_),
            [Token::Ident(k), Token::Colon, ..],
        ) => Want::Value(block.clone(), k.to_string()),
        _ => Want::Names,
    }
}

/// The block a `{` opens, from the tokens of its declaration.
fn block_of(head: &[Token<'_>]) -> Block {
    let word = |i: usize| match head.get(i) {
        Some(Token::Ident(w)) => w.to_string(),
        _ => String::new(),
    };
    match head.first() {
        Some(Token::Collective) => Block::Collective,
        Some(Token::Schedule) => Block::Schedule(word(1)),
        Some(Token::Model) => Block::Model(word(3)),
        Some(Token::Target) => Block::Target(word(1)),
        _ => Block::Code,
    }
}

/// Property keys of a block.
fn keys(b: &Block) -> Vec<&'static str> {
    match b {
        Block::Collective => collective::PROPS.to_vec(),
        Block::Schedule(f) => schedule::FAMILIES
            .iter()
            .find(|x| x.0 == f)
            .map(|x| x.1.to_vec())
            .unwrap_or_default(),
        Block::Model(k) => CostModelKind::ALL
            .iter()
            .find(|x| x.0 == k)
            .map(|x| decls::model_properties(x.1).iter().map(|p| p.0).collect())
            .unwrap_or_default(),
        Block::Target(k) => TargetKind::ALL
            .iter()
            .find(|x| x.0 == k)
            .map(|x| decls::target_properties(x.1).iter().map(|p| p.0).collect())
            .unwrap_or_default(),
        Block::Top | Block::Code => Vec::new(),
    }
}

/// The allowed words for `key` in a block.
fn value_words(b: &Block, key: &str, items: &mut Vec<CompletionItem>) {
    let from = |list: Vec<(&'static str, &'static [&'static str])>| -> Vec<&'static str> {
        list.into_iter()
            .find(|p| p.0 == key)
            .map(|p| p.1.to_vec())
            .unwrap_or_default()
    };
    let ws: Vec<&str> = match (b, key) {
        (Block::Collective, "dtype") => Dtype::ALL.iter().map(|x| x.0).collect(),
        (Block::Collective, "op") => ReduceOp::ALL.iter().map(|x| x.0).collect(),
        (Block::Collective, "participants") => vec!["all"],
        (Block::Schedule(_), "leader") => LeaderPolicy::ALL.iter().map(|x| x.0).collect(),
        (Block::Schedule(_), "stages" | "k") => vec!["auto"],
        (Block::Model(k), _) => CostModelKind::ALL
            .iter()
            .find(|x| x.0 == k)
            .map(|x| from(decls::model_properties(x.1)))
            .unwrap_or_default(),
        (Block::Target(k), _) => TargetKind::ALL
            .iter()
            .find(|x| x.0 == k)
            .map(|x| from(decls::target_properties(x.1)))
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    words(items, ws.into_iter(), key);
}

/// Stage encodings, and whole stage lists that fit the rank count when it is known.
fn stages(ranks: Option<usize>, items: &mut Vec<CompletionItem>) {
    if let Some(n) = ranks {
        for s in schedule::suggestions(n as u64) {
            // Written as "`[a3, a4]`"; a single rank has "`[]` (...)", which is skipped.
            let list = s
                .trim_matches('`')
                .trim_start_matches('[')
                .trim_end_matches(']');
            if list.is_empty() || list.contains('`') {
                continue;
            }
            let mut it = item(
                list,
                CompletionItemKind::VALUE,
                &format!("stages for {n} ranks"),
            );
            it.sort_text = Some(format!("0{list}"));
            items.push(it);
        }
    }
    for (label, example) in [
        ("aB", "a2"),
        ("cTmB", "c4m2"),
        ("eTmB", "e4m2"),
        ("mRgGaB", "m1g1a2"),
        ("nRgGaB", "n1g1a2"),
    ] {
        let mut it = item(
            label,
            CompletionItemKind::ENUM_MEMBER,
            &describe::stage_meaning(example),
        );
        it.insert_text = Some(example.to_string());
        it.filter_text = Some(example.to_string());
        it.sort_text = Some(format!("1{label}"));
        items.push(it);
    }
}

/// Declared names visible at `offset`.
fn names(an: &crate::lsp::analysis::Analysis, offset: usize, items: &mut Vec<CompletionItem>) {
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
fn scanned_names(before: &str) -> Vec<CompletionItem> {
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

fn models(an: &crate::lsp::analysis::Analysis, items: &mut Vec<CompletionItem>) {
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
fn generators(an: &crate::lsp::analysis::Analysis, items: &mut Vec<CompletionItem>) {
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
