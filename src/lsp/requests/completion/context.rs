//! The completion context, read from the tokens before the cursor: the stack of open blocks
//! (each labelled by the declaration that opened it), what is wanted at the cursor ([`Want`]), and
//! the property keys each block accepts.

use super::{Block, Want};
use crate::sema::model::{CostModelKind, TargetKind};
use crate::sema::{collective, decls, schedule};
use crate::syntax::lexer::{Token, lex};

/// Reads the context from the text before the word being typed.
pub(super) fn context(before: &str) -> Want {
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
pub(super) fn keys(b: &Block) -> Vec<&'static str> {
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
