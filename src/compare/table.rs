//! The table `collc compare` prints ([`table`]): a header that says what is compared, with
//! which model, and how the bandwidths are defined; per family its time, algbw and busbw at
//! every row, and the winner; below, the schedules, the crossovers and notes.
//!
//! Every line fits [`WIDTH`] columns, whatever the number of families (a packet model adds
//! the in-network ones, eight in all): the header's and footer's prose is wrapped at spaces,
//! and the families that do not fit beside each other continue in further panels below the
//! first, each repeating the rows' labels, the winner after the last family (as pandas prints
//! a frame wider than the terminal).

use super::render::{gbs, model_line, span_of, subject, time};
use super::{Axis, Cell, Comparison, Point, label, short};
use crate::sema::model::Family;

/// Columns a line of the table takes at most.
pub const WIDTH: usize = 100;

/// Columns of one family: the gap before it, then time, algbw and busbw.
const FAMILY: usize = 3 + 10 + 1 + 8 + 1 + 8;

/// Lines of prose after the first are indented this much.
const INDENT: usize = 2;

/// Appends `text` in lines of at most [`WIDTH`] characters ([`crate::plot::wrap`]), the lines
/// after the first indented by [`INDENT`].
fn wrap(out: &mut String, text: &str) {
    for (i, line) in crate::plot::wrap(text, WIDTH - INDENT).iter().enumerate() {
        if i > 0 {
            out.push_str(&" ".repeat(INDENT));
        }
        out.push_str(line);
        out.push('\n');
    }
}

/// The table `collc compare` prints by default.
pub fn table(c: &Comparison) -> String {
    let mut out = String::new();
    wrap(
        &mut out,
        &format!("compare: {}, {}", subject(c), span_of(c)),
    );
    wrap(&mut out, &model_line(c));
    let points: &[Point] = match &c.axis {
        Axis::Param { points, .. } => points,
        Axis::Size => &[],
    };
    let first = c.engine.describe();
    for (s, p) in points.iter().enumerate() {
        let here = p.engine.describe();
        if here != first {
            wrap(&mut out, &format!("at {}: {here}", c.row_label(s)));
        }
    }
    if points.iter().any(|p| p.ranks != c.ranks) {
        let ranks: Vec<String> = points
            .iter()
            .enumerate()
            .map(|(s, p)| format!("{} at {}", p.ranks, c.row_label(s)))
            .collect();
        wrap(
            &mut out,
            &format!(
                "algbw = size / time, busbw = algbw x nccl-tests' factor for {} on each row's ranks ({}), in GB/s",
                c.kind.name(),
                ranks.join(", ")
            ),
        );
    } else {
        wrap(
            &mut out,
            &format!(
                "algbw = size / time, busbw = algbw x {:.4} (nccl-tests' factor for {} on {} ranks), in GB/s",
                c.bus_factor(),
                c.kind.name(),
                c.ranks
            ),
        );
    }
    panels(&mut out, c);
    out.push('\n');
    footer(&mut out, c);
    out
}

/// The families' columns in panels of at most [`WIDTH`] columns, the winner after the last
/// family (in a panel of its own when it does not fit beside it).
fn panels(out: &mut String, c: &Comparison) {
    let width = (0..c.cells.len())
        .map(|s| c.row_label(s).len())
        .max()
        .unwrap_or(0)
        .max(10);
    let winners: Vec<String> = (0..c.cells.len())
        .map(|s| {
            c.winner(s)
                .map_or("-".to_string(), |w| short(&c.families[w]))
        })
        .collect();
    let winner_width = winners.iter().map(String::len).max().unwrap_or(0).max(6);
    let mut groups: Vec<Vec<usize>> = vec![Vec::new()];
    for f in 0..c.families.len() {
        if let Some(g) = groups.last_mut()
            && (g.is_empty() || width + FAMILY * (g.len() + 1) <= WIDTH)
        {
            g.push(f);
        } else {
            groups.push(vec![f]);
        }
    }
    let last = groups.last().map_or(0, Vec::len);
    if last > 0 && width + FAMILY * last + 3 + winner_width > WIDTH {
        groups.push(Vec::new());
    }
    let axis = match &c.axis {
        Axis::Size => "size",
        Axis::Param { .. } => "value",
    };
    let n = groups.len();
    for (i, group) in groups.iter().enumerate() {
        out.push('\n');
        let with_winner = i + 1 == n;
        let mut head = format!("{:<width$}", "");
        let mut cols = format!("{axis:<width$}");
        for &f in group {
            head.push_str(&format!(
                "   {:-^28}",
                format!(" {} ", short(&c.families[f]))
            ));
            cols.push_str(&format!("   {:>10} {:>8} {:>8}", "time", "algbw", "busbw"));
        }
        if with_winner {
            cols.push_str("   winner");
        }
        if !group.is_empty() {
            out.push_str(head.trim_end());
            out.push('\n');
        }
        out.push_str(&cols);
        out.push('\n');
        for (s, row) in c.cells.iter().enumerate() {
            let mut line = format!("{:<width$}", c.row_label(s));
            for &f in group {
                line.push_str(&match &row[f] {
                    Cell::Done {
                        seconds,
                        algbw,
                        busbw,
                    } => format!(
                        "   {:>10} {:>8} {:>8}",
                        time(*seconds),
                        gbs(*algbw),
                        gbs(*busbw)
                    ),
                    Cell::Failed { .. } => format!("   {:>10} {:>8} {:>8}", "-", "-", "-"),
                });
            }
            if with_winner {
                line.push_str(&format!("   {}", winners[s]));
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
}

/// The schedules, the crossovers and the notes below the table.
fn footer(out: &mut String, c: &Comparison) {
    let schedules: Vec<String> = c.families.iter().map(label).collect();
    wrap(out, &format!("schedules: {}", schedules.join("; ")));
    let cross = c.crossovers();
    if cross.is_empty() {
        let only = (0..c.sizes.len()).find_map(|s| c.winner(s));
        match only {
            Some(w) => wrap(
                out,
                &format!(
                    "crossovers: none; {} is fastest at every {}",
                    short(&c.families[w]),
                    match &c.axis {
                        Axis::Size => "size".to_string(),
                        Axis::Param { names, .. } => format!("value of {}", names.join(" and ")),
                    }
                ),
            ),
            None => wrap(out, "crossovers: none"),
        }
    } else {
        let list: Vec<String> = cross
            .iter()
            .map(|x| {
                format!(
                    "{} -> {} at {}",
                    short(&c.families[x.from]),
                    short(&c.families[x.to]),
                    c.row_label(x.row)
                )
            })
            .collect();
        wrap(out, &format!("crossovers: {}", list.join(", ")));
    }
    // nccl-tests' factor counts what hosts must move between them; a reduction in the switches
    // moves less, so its busbw can pass the links' rate.
    let in_network: Vec<String> = c
        .families
        .iter()
        .filter(|f| Family::in_network(f))
        .map(short)
        .collect();
    if !in_network.is_empty() {
        wrap(
            out,
            &format!(
                "note: in-network schedules reduce in the switches ({}) and move less than the factor of busbw assumes, so their busbw can exceed the link rate",
                in_network.join(", ")
            ),
        );
    }
    for n in c.notes() {
        wrap(out, &format!("note: {n}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prose_wraps_within_the_width_and_indents() {
        let mut out = String::new();
        wrap(&mut out, &["word"; 60].join(" "));
        assert!(out.lines().all(|l| l.len() <= WIDTH), "{out}");
        assert!(
            out.lines().skip(1).all(|l| l.starts_with("  word")),
            "{out}"
        );
        assert_eq!(out.split_whitespace().count(), 60);
    }
}
