//! One file per LSP request (and the diagnostics notification), after nickel's `lsp/nls`:
//! each exposes a `handle` function from the request's parameters to its result, given the
//! [`Engine`](super::engine::Engine). Shared here: what the client can display
//! ([`ClientCaps`]), the error a request answers with ([`ReqError`]), and span-to-location
//! conversion.

pub mod completion;
pub mod definition;
pub mod diagnostics;
pub mod formatting;
pub mod hover;
pub mod references;
pub mod semantic_tokens;
pub mod symbols;

use super::analysis::Analysis;
use super::text::LineIndex;
use super::uri::{self, StdlibFiles};
use crate::diag::Span;
use lsp_server::ErrorCode;
use lsp_types::{ClientCapabilities, Location, MarkupKind, Uri};
use std::path::Path;

/// What the client declared it can display, as far as the server's answers depend on it.
#[derive(Debug, Clone, Default)]
pub struct ClientCaps {
    /// `relatedInformation` on diagnostics (else secondary labels go into the message).
    pub related_information: bool,
    /// Markdown in hover (else plain text).
    pub hover_markdown: bool,
    /// Nested document symbols (else a flat list of symbol information).
    pub hierarchical_symbols: bool,
    /// Markdown in completion item documentation.
    pub completion_markdown: bool,
}

impl ClientCaps {
    pub fn from(c: &ClientCapabilities) -> ClientCaps {
        let td = c.text_document.as_ref();
        let md = |kinds: Option<&Vec<MarkupKind>>| {
            kinds.is_some_and(|k| k.contains(&MarkupKind::Markdown))
        };
        ClientCaps {
            related_information: td
                .and_then(|t| t.publish_diagnostics.as_ref())
                .and_then(|p| p.related_information)
                .unwrap_or(false),
            hover_markdown: md(td
                .and_then(|t| t.hover.as_ref())
                .and_then(|h| h.content_format.as_ref())),
            hierarchical_symbols: td
                .and_then(|t| t.document_symbol.as_ref())
                .and_then(|s| s.hierarchical_document_symbol_support)
                .unwrap_or(false),
            completion_markdown: md(td
                .and_then(|t| t.completion.as_ref())
                .and_then(|c| c.completion_item.as_ref())
                .and_then(|i| i.documentation_format.as_ref())),
        }
    }
}

/// An error response.
#[derive(Debug, Clone)]
pub struct ReqError {
    pub code: i32,
    pub message: String,
}

impl ReqError {
    pub fn invalid_params(message: impl Into<String>) -> ReqError {
        ReqError {
            code: ErrorCode::InvalidParams as i32,
            message: message.into(),
        }
    }

    pub fn failed(message: impl Into<String>) -> ReqError {
        ReqError {
            code: ErrorCode::RequestFailed as i32,
            message: message.into(),
        }
    }

    pub fn internal(message: impl Into<String>) -> ReqError {
        ReqError {
            code: ErrorCode::InternalError as i32,
            message: message.into(),
        }
    }
}

/// The location of a span of an analysis: in the document itself (`doc`), in a standard
/// library module (its file in the cache, see [`StdlibFiles`]), or in an imported file.
pub fn location(
    an: &Analysis,
    doc: &Uri,
    stdlib: &mut StdlibFiles,
    span: Span,
) -> Option<Location> {
    if (span.file.0 as usize) >= an.sources.len() {
        return None;
    }
    let file = an.sources.get(span.file);
    let uri = if span.file == an.main {
        doc.clone()
    } else if let Some(m) = StdlibFiles::module_of(&file.name) {
        stdlib.uri(m)?
    } else {
        uri::from_path(Path::new(&file.name))?
    };
    let lines = LineIndex::new(&file.text);
    Some(Location::new(
        uri,
        lines.range(&file.text, span.start as usize, span.end as usize),
    ))
}
