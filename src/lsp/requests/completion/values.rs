//! Completion of property values: the allowed words for a key of the enclosing block, and stage
//! encodings with whole stage lists that fit the collective's rank count.

use super::{Block, item, words};
use crate::lsp::describe;
use crate::sema::model::{CostModelKind, Dtype, LeaderPolicy, ReduceOp, TargetKind};
use crate::sema::{decls, schedule};
use lsp_types::{CompletionItem, CompletionItemKind};

/// The allowed words for `key` in a block.
pub(super) fn value_words(b: &Block, key: &str, items: &mut Vec<CompletionItem>) {
    let from = |list: Vec<(&'static str, &'static [&'static str])>| -> Vec<&'static str> {
        list.into_iter()
            .find(|p| p.0 == key)
            .map(|p| p.1.to_vec())
            .unwrap_or_default()
    };
    let ws: Vec<&str> = match (b, key) {
        (Block::Collective, "dtype") => Dtype::ALL.iter().map(|x| x.0).collect(),
        (Block::Collective, "op") => ReduceOp::ALL.iter().map(|x| x.0).collect(),
        (Block::Collective, "participants") => vec!["all"],
        (Block::Schedule(_), "leader") => LeaderPolicy::ALL.iter().map(|x| x.0).collect(),
        (Block::Schedule(_), "root") => vec!["round_robin"],
        (Block::Schedule(_), "stages" | "k" | "chunks" | "retransmit") => {
            // `auto` is a keyword: offered as one, or the keyword filter drops it.
            let mut it = item("auto", CompletionItemKind::KEYWORD, key);
            it.sort_text = Some("0auto".into());
            items.push(it);
            Vec::new()
        }
        (Block::Model(k), _) => CostModelKind::ALL
            .iter()
            .find(|x| x.0 == k)
            .map(|x| from(decls::model_properties(x.1)))
            .unwrap_or_default(),
        (Block::Target(k), _) => TargetKind::ALL
            .iter()
            .find(|x| x.0 == k)
            .map(|x| from(decls::target_properties(x.1)))
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    words(items, ws.into_iter(), key);
}

/// Stage encodings, and whole stage lists that fit the rank count when it is known.
pub(super) fn stages(ranks: Option<usize>, items: &mut Vec<CompletionItem>) {
    if let Some(n) = ranks {
        for s in schedule::suggestions(n as u64) {
            // Written as "`[a3, a4]`"; a single rank has "`[]` (...)", which is skipped.
            let list = s
                .trim_matches('`')
                .trim_start_matches('[')
                .trim_end_matches(']');
            if list.is_empty() || list.contains('`') {
                continue;
            }
            let mut it = item(
                list,
                CompletionItemKind::VALUE,
                &format!("stages for {n} ranks"),
            );
            it.sort_text = Some(format!("0{list}"));
            items.push(it);
        }
    }
    for (label, example) in [
        ("aB", "a2"),
        ("cTmB", "c4m2"),
        ("eTmB", "e4m2"),
        ("mRgGaB", "m1g1a2"),
        ("nRgGaB", "n1g1a2"),
    ] {
        let mut it = item(
            label,
            CompletionItemKind::ENUM_MEMBER,
            &describe::stage_meaning(example),
        );
        it.insert_text = Some(example.to_string());
        it.filter_text = Some(example.to_string());
        it.sort_text = Some(format!("1{label}"));
        items.push(it);
    }
}
