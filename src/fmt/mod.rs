//! The canonical formatter (`collc fmt`). Placeholder until the formatter lands: returns the
//! input unchanged after checking it parses.

use crate::diag::{Diagnostic, FileId};

/// Formats a file; refuses (with the syntax diagnostics) when it does not parse.
pub fn format_source(file: FileId, src: &str) -> Result<String, Vec<Diagnostic>> {
    let (_, diags) = crate::syntax::parse(file, src);
    if !diags.is_empty() {
        return Err(diags);
    }
    Ok(src.to_string())
}
