//! `textDocument/references`: every use of the name under the cursor, in the document and in the
//! files it imports (the declaration too when the client asks for it).

use super::{ReqError, location};
use crate::lsp::engine::Engine;
use crate::lsp::index::Hit;
use crate::lsp::text::LineIndex;
use lsp_types::{Location, ReferenceParams};

pub fn handle(e: &mut Engine, p: ReferenceParams) -> Result<Option<Vec<Location>>, ReqError> {
    let pos = p.text_document_position;
    let uri = pos.text_document.uri;
    let an = e.analysis(&uri)?;
    let text = an.text();
    let lines = LineIndex::new(text);
    let offset = lines.offset(text, pos.position);
    let nav = an.nav();
    let Some(Hit::Name(r)) = nav.index.at(an.main, offset) else {
        return Ok(None);
    };
    let mut spans = nav.index.occurrences(r.def);
    if !p.context.include_declaration {
        spans.remove(0);
    }
    let mut out = Vec::new();
    for s in spans {
        if s.file == an.main {
            // The common case, without building a line index per location.
            out.push(Location::new(
                uri.clone(),
                lines.range(text, s.start as usize, s.end as usize),
            ));
        } else if let Some(l) = location(&an, &uri, &mut e.stdlib, s) {
            out.push(l);
        }
    }
    Ok(Some(out))
}
