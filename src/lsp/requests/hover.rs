//! `textDocument/hover`: what a name is (its declaration as written, kind, doc comment and, where
//! the checker computed it, its value), and for the declarations that make a model, what the
//! model holds: a topology's node and link counts, a collective's ranks and size, a schedule's
//! rank count, stages and modelled cost, what a stage encoding means.
//!
//! Counts and costs need the checked model, which exists only when the file has no errors; the
//! hover says so otherwise.

use super::ReqError;
use crate::lsp::analysis::Analysis;
use crate::lsp::describe::{self, head};
use crate::lsp::engine::Engine;
use crate::lsp::index::{DefKind, Hit, Mark};
use crate::lsp::text::LineIndex;
use crate::lsp::uri::StdlibFiles;
use lsp_types::{Hover, HoverContents, HoverParams, MarkupContent, MarkupKind};

const NO_MODEL: &str = "(counts and costs appear once the file checks without errors)";

pub fn handle(e: &mut Engine, p: HoverParams) -> Result<Option<Hover>, ReqError> {
    let pos = p.text_document_position_params;
    let an = e.analysis(&pos.text_document.uri)?;
    let text = an.text();
    let lines = LineIndex::new(text);
    let offset = lines.offset(text, pos.position);
    let nav = an.nav();
    let Some(hit) = nav.index.at(an.main, offset) else {
        return Ok(None);
    };
    let (span, code, notes) = match hit {
        Hit::Name(r) => {
            let (code, notes) = name(&an, r.def);
            (r.span, code, notes)
        }
        Hit::Mark(span, m) => {
            let (code, notes) = mark(&an, m);
            (span, code, notes)
        }
    };
    let value = render(&code, &notes, e.caps.hover_markdown);
    Ok(Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: if e.caps.hover_markdown {
                MarkupKind::Markdown
            } else {
                MarkupKind::PlainText
            },
            value,
        }),
        range: Some(lines.range(text, span.start as usize, span.end as usize)),
    }))
}

/// A code line (the declaration) and paragraphs of notes, as Markdown or plain text.
fn render(code: &str, notes: &[String], markdown: bool) -> String {
    let mut out = String::new();
    if !code.is_empty() {
        if markdown {
            out.push_str(&format!("```coll\n{code}\n```"));
        } else {
            out.push_str(code);
        }
    }
    for n in notes.iter().filter(|n| !n.is_empty()) {
        if !out.is_empty() {
            out.push_str(if markdown { "\n\n---\n\n" } else { "\n\n" });
        }
        out.push_str(n);
    }
    out
}

/// Hover of the name declared by def `d`.
fn name(an: &Analysis, d: usize) -> (String, Vec<String>) {
    let nav = an.nav();
    let def = &nav.index.defs[d];
    let file = an.sources.get(def.decl_span.file);
    let code = head(&file.text, def.decl_span);
    let mut notes = Vec::new();
    let owner = def
        .owner
        .map(|o| format!("`{}`", nav.index.defs[o].name))
        .unwrap_or_default();
    let model = an.model.as_ref();
    match def.kind {
        DefKind::Generator => {
            let doc = describe::doc_comment(&file.text, def.decl_span.start as usize);
            if !doc.is_empty() {
                notes.push(doc.join("\n"));
            }
        }
        DefKind::Param | DefKind::Let => {
            if let Some(v) = describe::global_values(an).get(&def.name) {
                notes.push(format!("value: {v}"));
            }
        }
        DefKind::GenParam => notes.push(format!("parameter of generator {owner}")),
        DefKind::LocalLet => notes.push(format!("local to generator {owner}")),
        DefKind::LoopVar => notes.push("loop variable".into()),
        DefKind::Compute | DefKind::Switch => {
            let whose = if owner.is_empty() {
                "of the topology".to_string()
            } else {
                format!("of generator {owner}")
            };
            let mut s = format!("{} {whose}", def.kind.word());
            match model.and_then(|m| describe::array_count(m, &def.name)) {
                Some(n) => s.push_str(&format!(
                    "; {n} node{} named `{}` in the topology",
                    if n == 1 { "" } else { "s" },
                    def.name
                )),
                None if model.is_none() => s.push_str(&format!(" {NO_MODEL}")),
                None => {}
            }
            notes.push(s);
        }
        DefKind::Instance => notes.push(format!(
            "instance of generator `{}`; its nodes are `{}.NAME`",
            def.instantiates.as_deref().unwrap_or("?"),
            def.name
        )),
        DefKind::Topology => match model.and_then(describe::topology_summary) {
            Some(s) => notes.push(s),
            None => notes.push(NO_MODEL.into()),
        },
        DefKind::CostModel => {
            if let Some(m) = model.and_then(|m| m.models.iter().find(|x| x.name == def.name)) {
                notes.push(describe::model_params(m));
            }
        }
    }
    if def.decl_span.file != an.main {
        let from = match StdlibFiles::module_of(&file.name) {
            Some(m) => format!("from the standard library module `{m}`"),
            None => format!("from `{}`", file.name),
        };
        notes.push(from);
    }
    (code, notes)
}

/// Hover of a word that is not a declared name.
fn mark(an: &Analysis, m: &Mark) -> (String, Vec<String>) {
    let model = an.model.as_ref();
    match m {
        Mark::Stage(s) => (s.clone(), vec![describe::stage_meaning(s)]),
        Mark::Builtin(b) => (
            describe::builtin_usage(b)
                .split(':')
                .next()
                .unwrap_or(b)
                .to_string(),
            vec![describe::builtin_usage(b).to_string()],
        ),
        Mark::Collective => (
            model
                .and_then(|m| m.collective.as_ref())
                .map(|c| format!("collective {}", c.kind.name()))
                .unwrap_or_else(|| "collective".into()),
            vec![
                model
                    .and_then(describe::collective_summary)
                    .unwrap_or_else(|| NO_MODEL.into()),
            ],
        ),
        Mark::Schedule => {
            let lines = model.map(describe::schedule_summary).unwrap_or_default();
            match lines.split_first() {
                Some((first, rest)) => (first.clone(), vec![rest.join("\n")]),
                None => ("schedule".into(), vec![NO_MODEL.into()]),
            }
        }
        Mark::StdModule(name) => {
            let doc = crate::sema::stdlib::get(name)
                .map(|t| {
                    let end = t.find("\ngenerator").unwrap_or(t.len());
                    describe::doc_comment(t, end).join("\n")
                })
                .unwrap_or_else(|| "no such standard library module".into());
            (format!("import {name}"), vec![doc])
        }
        Mark::FileImport(path) => (format!("import \"{path}\""), Vec::new()),
    }
}
