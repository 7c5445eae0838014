//! `textDocument/semanticTokens/full`: highlighting that knows what names are. Keywords,
//! numbers, quantities, strings and comments come from the lexer (the one `collc` uses); names
//! are classified through the name index: generators and built-ins as functions, generator
//! parameters as parameters, `let`/`param`/loop variables as variables, node arrays and
//! instances as namespaces, cost models as structs, stage encodings as enum members.

use super::ReqError;
use crate::lsp::engine::Engine;
use crate::lsp::index::{DefKind, Mark};
use crate::lsp::text::LineIndex;
use crate::syntax::lexer::{Token, lex};
use lsp_types::{
    SemanticToken, SemanticTokenType, SemanticTokens, SemanticTokensLegend, SemanticTokensParams,
    SemanticTokensResult,
};
use std::collections::HashMap;

const TYPES: &[SemanticTokenType] = &[
    SemanticTokenType::KEYWORD,
    SemanticTokenType::NUMBER,
    SemanticTokenType::STRING,
    SemanticTokenType::COMMENT,
    SemanticTokenType::FUNCTION,
    SemanticTokenType::PARAMETER,
    SemanticTokenType::VARIABLE,
    SemanticTokenType::NAMESPACE,
    SemanticTokenType::STRUCT,
    SemanticTokenType::ENUM_MEMBER,
];

fn ty(t: &SemanticTokenType) -> u32 {
    TYPES.iter().position(|x| x == t).unwrap_or(0) as u32
}

/// The legend announced in the server capabilities.
pub fn legend() -> SemanticTokensLegend {
    SemanticTokensLegend {
        token_types: TYPES.to_vec(),
        token_modifiers: Vec::new(),
    }
}

pub fn handle(
    e: &mut Engine,
    p: SemanticTokensParams,
) -> Result<Option<SemanticTokensResult>, ReqError> {
    let an = e.analysis(&p.text_document.uri)?;
    let text = an.text();
    let lines = LineIndex::new(text);
    let nav = an.nav();
    // Index classifications by start offset in the document.
    let mut names: HashMap<usize, SemanticTokenType> = HashMap::new();
    for r in nav.index.refs.iter().filter(|r| r.span.file == an.main) {
        let t = match nav.index.defs[r.def].kind {
            DefKind::Generator => SemanticTokenType::FUNCTION,
            DefKind::GenParam => SemanticTokenType::PARAMETER,
            DefKind::Param | DefKind::Let | DefKind::LocalLet | DefKind::LoopVar => {
                SemanticTokenType::VARIABLE
            }
            DefKind::Compute | DefKind::Switch | DefKind::Instance | DefKind::Topology => {
                SemanticTokenType::NAMESPACE
            }
            DefKind::CostModel => SemanticTokenType::STRUCT,
        };
        names.insert(r.span.start as usize, t);
    }
    for (s, m) in nav.index.marks.iter().filter(|(s, _)| s.file == an.main) {
        let t = match m {
            Mark::Stage(_) => SemanticTokenType::ENUM_MEMBER,
            Mark::Builtin(_) => SemanticTokenType::FUNCTION,
            _ => continue,
        };
        names.insert(s.start as usize, t);
    }
    let mut data = Vec::new();
    let (mut line, mut col) = (0u32, 0u32);
    for (start, tok, end) in lex(text) {
        let t = match tok {
            Ok(Token::Comment(_)) => SemanticTokenType::COMMENT,
            Ok(Token::Int(_) | Token::Decimal(_) | Token::Quantity(_)) => SemanticTokenType::NUMBER,
            Ok(Token::Str(_)) => SemanticTokenType::STRING,
            Ok(Token::Ident(_)) => match names.get(&start) {
                Some(t) => t.clone(),
                None => continue,
            },
            Ok(t) if t.is_keyword() => SemanticTokenType::KEYWORD,
            _ => continue,
        };
        let a = lines.position(text, start);
        let b = lines.position(text, end);
        if a.line != b.line {
            continue; // tokens do not span lines; be safe anyway
        }
        let delta_line = a.line - line;
        let delta_start = if delta_line == 0 {
            a.character - col
        } else {
            a.character
        };
        data.push(SemanticToken {
            delta_line,
            delta_start,
            length: b.character - a.character,
            token_type: ty(&t),
            token_modifiers_bitset: 0,
        });
        line = a.line;
        col = a.character;
    }
    Ok(Some(SemanticTokensResult::Tokens(SemanticTokens {
        result_id: None,
        data,
    })))
}
