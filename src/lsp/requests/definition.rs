//! `textDocument/definition`: where a name is declared, in the document, in an imported file, or
//! in a standard library module (answered with the module's file in collc's cache, see
//! [`crate::lsp::uri::StdlibFiles`]). On `import NAME;` or `import "file.coll";` it answers the
//! imported file itself.

use super::{ReqError, location};
use crate::lsp::engine::Engine;
use crate::lsp::index::{Hit, Mark};
use crate::lsp::text::LineIndex;
use lsp_types::{GotoDefinitionParams, GotoDefinitionResponse, Location, Range};
use std::path::Path;

pub fn handle(
    e: &mut Engine,
    p: GotoDefinitionParams,
) -> Result<Option<GotoDefinitionResponse>, ReqError> {
    let pos = p.text_document_position_params;
    let uri = pos.text_document.uri;
    let an = e.analysis(&uri)?;
    let text = an.text();
    let offset = LineIndex::new(text).offset(text, pos.position);
    let nav = an.nav();
    let target = match nav.index.at(an.main, offset) {
        Some(Hit::Name(r)) => location(&an, &uri, &mut e.stdlib, nav.index.defs[r.def].name_span),
        Some(Hit::Mark(_, Mark::StdModule(m))) => {
            e.stdlib.uri(m).map(|u| Location::new(u, Range::default()))
        }
        Some(Hit::Mark(_, Mark::FileImport(path))) => Some(Path::new(path))
            .filter(|p| p.exists())
            .and_then(crate::lsp::uri::from_path)
            .map(|u| Location::new(u, Range::default())),
        _ => None,
    };
    Ok(target.map(GotoDefinitionResponse::Scalar))
}
