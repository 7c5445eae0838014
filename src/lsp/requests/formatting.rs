//! `textDocument/formatting`: `collc fmt` ([`crate::fmt::format_source`]) as one edit that
//! replaces the whole document. No edit when the text is already formatted, or when it has
//! syntax errors (the formatter refuses those; the diagnostics already show them).

use super::ReqError;
use crate::diag::FileId;
use crate::lsp::engine::Engine;
use lsp_types::{DocumentFormattingParams, TextEdit};

pub fn handle(
    e: &mut Engine,
    p: DocumentFormattingParams,
) -> Result<Option<Vec<TextEdit>>, ReqError> {
    let uri = p.text_document.uri;
    let Some(doc) = e.docs.get(&uri) else {
        return Err(ReqError::invalid_params(format!(
            "`{}` is not open: send textDocument/didOpen first",
            uri.as_str()
        )));
    };
    match crate::fmt::format_source(FileId(0), &doc.text) {
        Ok(s) if s != doc.text => Ok(Some(vec![TextEdit::new(doc.full_range(), s)])),
        Ok(_) | Err(_) => Ok(Some(Vec::new())),
    }
}
