//! `textDocument/documentSymbol`: the outline. Declarations of the document in order, with the
//! parameters, node arrays and instances of generators and of a topology block as children;
//! a flat list with container names for clients without nested symbols.

use super::ReqError;
use crate::diag::Span;
use crate::lsp::describe::head;
use crate::lsp::engine::Engine;
use crate::lsp::text::LineIndex;
use crate::syntax::ast::{self, Item, Stmt};
use lsp_types::{
    DocumentSymbol, DocumentSymbolParams, DocumentSymbolResponse, Location, SymbolInformation,
    SymbolKind,
};

struct Sym {
    name: String,
    detail: Option<String>,
    kind: SymbolKind,
    span: Span,
    name_span: Span,
    children: Vec<Sym>,
}

pub fn handle(
    e: &mut Engine,
    p: DocumentSymbolParams,
) -> Result<Option<DocumentSymbolResponse>, ReqError> {
    let uri = p.text_document.uri;
    let an = e.analysis(&uri)?;
    let text = an.text();
    let lines = LineIndex::new(text);
    let syms: Vec<Sym> = an
        .tree()
        .items
        .iter()
        .filter_map(|i| item(text, i))
        .collect();
    let range = |s: Span| lines.range(text, s.start as usize, s.end as usize);
    if e.caps.hierarchical_symbols {
        fn conv(s: Sym, range: &dyn Fn(Span) -> lsp_types::Range) -> DocumentSymbol {
            #[allow(deprecated)]
            DocumentSymbol {
                name: s.name,
                detail: s.detail,
                kind: s.kind,
                tags: None,
                deprecated: None,
                range: range(s.span),
                selection_range: range(s.name_span),
                children: (!s.children.is_empty())
                    .then(|| s.children.into_iter().map(|c| conv(c, range)).collect()),
            }
        }
        return Ok(Some(DocumentSymbolResponse::Nested(
            syms.into_iter().map(|s| conv(s, &range)).collect(),
        )));
    }
    fn flatten(s: Sym, container: Option<&str>, out: &mut Vec<(Sym, Option<String>)>) {
        let mut s = s;
        let children = std::mem::take(&mut s.children);
        let name = s.name.clone();
        out.push((s, container.map(str::to_string)));
        for c in children {
            flatten(c, Some(&name), out);
        }
    }
    let mut all = Vec::new();
    for s in syms {
        flatten(s, None, &mut all);
    }
    let mut flat = Vec::new();
    for (s, container) in all {
        #[allow(deprecated)]
        flat.push(SymbolInformation {
            name: s.name,
            kind: s.kind,
            tags: None,
            deprecated: None,
            location: Location::new(uri.clone(), range(s.span)),
            container_name: container,
        });
    }
    Ok(Some(DocumentSymbolResponse::Flat(flat)))
}

fn sym(name: &str, detail: Option<String>, kind: SymbolKind, span: Span, name_span: Span) -> Sym {
    Sym {
        name: if name.is_empty() {
            "?".into()
        } else {
            name.into()
        },
        detail,
        kind,
        // The name must lie inside the range.
        span: span.to(name_span),
        name_span,
        children: Vec::new(),
    }
}

fn item(text: &str, i: &Item) -> Option<Sym> {
    Some(match i {
        Item::Import { span, path } => {
            let (name, s) = match path {
                ast::ImportPath::Std(id) => (id.name.clone(), id.span),
                ast::ImportPath::File(p, s) => (p.clone(), *s),
            };
            sym(&name, Some("import".into()), SymbolKind::MODULE, *span, s)
        }
        Item::Param { name, span, .. } => sym(
            &name.name,
            Some(head(text, *span)),
            SymbolKind::CONSTANT,
            *span,
            name.span,
        ),
        Item::Let { name, span, .. } => sym(
            &name.name,
            Some(head(text, *span)),
            SymbolKind::VARIABLE,
            *span,
            name.span,
        ),
        Item::Generator {
            name,
            params,
            body,
            span,
        } => {
            let mut s = sym(
                &name.name,
                Some(head(text, *span)),
                SymbolKind::FUNCTION,
                *span,
                name.span,
            );
            for p in params {
                s.children.push(sym(
                    &p.name.name,
                    Some(head(text, p.span)),
                    SymbolKind::VARIABLE,
                    p.span,
                    p.name.span,
                ));
            }
            stmts(text, body, &mut s.children);
            s
        }
        Item::Topology { name, body, span } => {
            let mut s = sym(
                &name.name,
                Some(head(text, *span)),
                SymbolKind::NAMESPACE,
                *span,
                name.span,
            );
            if let ast::TopologyBody::Block(b) = body {
                stmts(text, b, &mut s.children);
            }
            s
        }
        Item::Collective { kind, span, .. } => sym(
            &format!("collective {}", kind.name),
            None,
            SymbolKind::EVENT,
            *span,
            kind.span,
        ),
        Item::Schedule { family, span, .. } => sym(
            &format!("schedule {}", family.name),
            None,
            SymbolKind::OPERATOR,
            *span,
            family.span,
        ),
        Item::Model {
            name, kind, span, ..
        } => sym(
            &name.name,
            Some(format!("model: {}", kind.name)),
            SymbolKind::STRUCT,
            *span,
            name.span,
        ),
        Item::Target { kind, span, .. } => sym(
            &format!("target {}", kind.name),
            None,
            SymbolKind::PACKAGE,
            *span,
            kind.span,
        ),
        Item::Error(_) => return None,
    })
}

/// Node arrays and instances of a body, at any depth.
fn stmts(text: &str, body: &[Stmt], out: &mut Vec<Sym>) {
    for s in body {
        match s {
            Stmt::Node { name, span, .. } => out.push(sym(
                &name.name,
                Some(head(text, *span)),
                SymbolKind::ARRAY,
                *span,
                name.span,
            )),
            Stmt::Use { alias, span, .. } => {
                let mut e = alias;
                while let ast::ExprKind::Index(b, _) = &e.kind {
                    e = b;
                }
                if let ast::ExprKind::Name(n) = &e.kind {
                    out.push(sym(
                        n,
                        Some(head(text, *span)),
                        SymbolKind::OBJECT,
                        *span,
                        e.span,
                    ));
                }
            }
            Stmt::For { body, .. } => stmts(text, body, out),
            Stmt::If { then, els, .. } => {
                stmts(text, then, out);
                if let Some(e) = els {
                    stmts(text, e, out);
                }
            }
            _ => {}
        }
    }
}
