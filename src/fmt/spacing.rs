//! Token classification and the horizontal spacing rules of the formatter.
//!
//! [`roles`] gives each token the little context the spacing rules need: whether a `-` or `!`
//! is unary, whether an identifier is a link attribute key (`latency` in `, latency 1 us`), and
//! whether a `:` is the one of a link statement. [`vertical_groups`] finds the `(`/`[` groups that
//! contain a comment (they are printed one element per line). [`space_between`] decides whether
//! one space separates two tokens printed on the same line.

use super::Tok;
use crate::syntax::lexer::Token;

/// What a token is doing in its position, beyond its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    Plain,
    /// A prefix `-` or `!`, attached to its operand.
    Unary,
    /// The key of a link attribute: `latency` in `link a -> b : 1 GB/s, latency 1 us;`.
    AttrKey,
    /// The `:` between a link's endpoints and its bandwidth, spaced on both sides.
    LinkColon,
}

/// Whether the token can end an operand (so that a following `-` is binary, `(` is a call and
/// `[` is an index).
fn ends_operand(tok: Token<'_>, role: Role) -> bool {
    use Token::*;
    match tok {
        Ident(_) => role != Role::AttrKey,
        Int(_) | Decimal(_) | Quantity(_) | Str(_) | True | False | Auto | RParen | RBracket => {
            true
        }
        _ => false,
    }
}

/// The role of every token (comments get [`Role::Plain`]), same indexes as `toks`.
pub(super) fn roles(toks: &[Tok<'_>]) -> Vec<Role> {
    let mut out = Vec::with_capacity(toks.len());
    let mut in_link = false;
    let mut nest = 0usize;
    let mut prev: Option<(Token<'_>, Role)> = None;
    for t in toks {
        let tok = t.tok;
        if matches!(tok, Token::Comment(_)) {
            out.push(Role::Plain);
            continue;
        }
        let role = match tok {
            Token::Bang => Role::Unary,
            Token::Minus => match prev {
                Some((p, r)) if ends_operand(p, r) => Role::Plain,
                _ => Role::Unary,
            },
            Token::Ident(_) if in_link && nest == 0 && matches!(prev, Some((Token::Comma, _))) => {
                Role::AttrKey
            }
            Token::Colon if in_link && nest == 0 => Role::LinkColon,
            _ => Role::Plain,
        };
        match tok {
            Token::Link => in_link = true,
            Token::Semi | Token::LBrace | Token::RBrace => in_link = false,
            Token::LParen | Token::LBracket => nest += 1,
            Token::RParen | Token::RBracket => nest = nest.saturating_sub(1),
            _ => {}
        }
        out.push(role);
        prev = Some((tok, role));
    }
    out
}

/// For every token, whether it is a `(` or `[` whose group (up to the matching close) contains a
/// comment. Such groups are printed with one element per line.
pub(super) fn vertical_groups(toks: &[Tok<'_>]) -> Vec<bool> {
    let mut out = vec![false; toks.len()];
    let mut open: Vec<usize> = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        match t.tok {
            Token::LParen | Token::LBracket => open.push(i),
            Token::RParen | Token::RBracket => {
                open.pop();
            }
            Token::Comment(_) => {
                for &o in &open {
                    out[o] = true;
                }
            }
            _ => {}
        }
    }
    out
}

/// Whether one space separates `prev` and `next` when they are printed on the same line.
pub(super) fn space_between(
    prev: Token<'_>,
    prev_role: Role,
    next: Token<'_>,
    next_role: Role,
) -> bool {
    use Token::*;
    if matches!(next, Semi | Comma | RParen | RBracket | Dot | DotDot) {
        return false;
    }
    if next == Colon {
        return next_role == Role::LinkColon;
    }
    if matches!(prev, LParen | LBracket | Dot | DotDot) || prev_role == Role::Unary {
        return false;
    }
    if prev == LBrace && next == RBrace {
        return false;
    }
    match next {
        // A call (`f(x)`, `generator g(...)`): the callee is an identifier.
        LParen => !(matches!(prev, Ident(_)) && prev_role != Role::AttrKey),
        // An index (`a[i]`, `f(x)[0]`, dimensions `compute gpu[8]`).
        LBracket => !ends_operand(prev, prev_role),
        _ => true,
    }
}
