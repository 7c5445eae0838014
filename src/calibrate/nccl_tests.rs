//! Reads nccl-tests logs (E0051): the standard output of `all_reduce_perf`, `all_gather_perf`,
//! `reduce_scatter_perf`, `broadcast_perf`, `reduce_perf` (and the other NVIDIA/nccl-tests
//! binaries, whose tables have the same shape) into a [`Log`]: every table of measurements, the
//! rank count of its run, and the `NCCL_ALGO` / `NCCL_PROTO` the log shows. [`infer`] tells
//! which collective a table measured from the ratio of its bus and algorithm bandwidths.
//!
//! A table's columns come from its title line, so every version's shape reads: 2017's `bytes N
//! type [op] [root]` (time in ms, an error magnitude `0e+00`, no `#` before `nThread`), 2019's
//! `size count type [redop] [root]` (an `error` magnitude), 2.13's `redop` and `root` in every
//! table with `#wrong` counts (`%g`: `1.2e+06`) or `N/A`, and 2.19's `cputime`, per-iteration
//! columns and `timestamp`. Rows without a title are read by their column count. The rank count
//! is the number of distinct `#  Rank N` device lines since the run's `nThread` line, unknown
//! without them (nThread x nGpus is per process, and the log does not say how many processes
//! ran). Lines that are neither `#` comments nor rows (NCCL INFO/WARN, mpirun) are skipped.

use crate::diag::{Code, Diagnostic, FileId, Span};
use crate::sema::model::CollectiveKind;
use std::collections::BTreeSet;

/// One nccl-tests log, as many tables as it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Log {
    pub tables: Vec<Table>,
    pub algo: Option<String>,
    pub proto: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// The span of the table's column-title line (or first row when there is none).
    pub span: Span,
    /// Ranks of the run, when the header says (the `#  Rank` device lines).
    pub ranks: Option<u32>,
    /// The collective, inferred: see [`infer`].
    pub collective: Option<CollectiveKind>,
    pub rows: Vec<Row>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The whole line.
    pub span: Span,
    pub bytes: u64,
    pub count: u64,
    /// As printed: float, half, bfloat16, int32, ...
    pub dtype: String,
    pub redop: Option<String>,
    pub root: Option<i64>,
    /// None when all its fields are N/A.
    pub out_of_place: Option<Measure>,
    pub in_place: Option<Measure>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measure {
    pub time_us: f64,
    pub algbw: f64,
    pub busbw: f64,
    /// Wrong elements; None when not checked (`N/A`) or printed as an error magnitude.
    pub wrong: Option<u64>,
}

/// The columns of a table: size, count, type, the optional ones (`lead` in all), then per group
/// (out-of-place, in-place) time, algbw, busbw, wrong and per-iteration columns, then a timestamp.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Layout {
    redop: bool,
    root: bool,
    lead: usize,
    groups: usize,
    group_len: usize,
    tail: usize,
    /// Whether the wrong column counts (`#wrong`), rather than an error magnitude (`error`).
    counts: bool,
    /// Microseconds per printed time unit (1000 for the 2017 versions' milliseconds).
    time_scale: f64,
}

/// The layout of a column-title line's `words` (after its `#`): None when it is not a title,
/// an error when it is one nccl-tests does not print.
fn title_layout(words: &[&str]) -> Option<Result<Layout, String>> {
    let is_time = |w: &&str| matches!(*w, "time" | "cputime");
    let first = words.iter().position(is_time)?;
    if !words.contains(&"algbw") || !words.contains(&"busbw") {
        return None;
    }
    let (lead, mut cols) = words.split_at(first);
    let bad = Some(Err(format!("columns `{}`", words.join(" "))));
    let (redop, root) = match lead.get(3..) {
        Some([]) => (false, false),
        Some(["redop" | "op"]) => (true, false),
        Some(["root"]) => (false, true),
        Some(["redop" | "op", "root"]) => (true, true),
        _ => return bad,
    };
    let time_scale = match lead.get(..3) {
        Some(["size", "count", "type"]) => 1.0,
        Some(["bytes", "N", "type"]) => 1000.0,
        _ => return bad,
    };
    let mut tail = 0;
    if let Some(rest) = cols.strip_suffix(&["timestamp"]) {
        (cols, tail) = (rest, 2);
    }
    // One group or two of the same columns, each time, algbw, busbw, wrong, ...
    let groups = cols.iter().filter(|w| is_time(w)).count();
    let group_len = cols.len() / groups.max(1);
    let wrong = ["#wrong", "error", "res"];
    let ok =
        |g: &[&str]| matches!(g, [t, "algbw", "busbw", w, ..] if is_time(t) && wrong.contains(w));
    let two = groups == 2 && group_len * 2 == cols.len();
    if !(groups == 1 || two) || !cols.chunks(group_len.max(1)).all(ok) {
        return bad;
    }
    let (counts, lead) = (cols.contains(&"#wrong"), lead.len());
    Some(Ok(Layout {
        redop,
        root,
        lead,
        groups,
        group_len,
        tail,
        counts,
        time_scale,
    }))
}

/// The layout of a row that comes without a title, from its column count (7 to 9: one group,
/// 11 to 13: two; a fourth column that is an integer is a root, else a redop).
fn guess_layout(fields: &[Field]) -> Option<Layout> {
    let (groups, optional) = match fields.len() {
        n @ 7..=9 => (1, n - 7),
        n @ 11..=13 => (2, n - 11),
        _ => return None,
    };
    let int = fields.get(3).is_some_and(|f| f.1.parse::<i64>().is_ok());
    let mut words = vec!["size", "count", "type"];
    words.extend(match (optional, int) {
        (0, _) => &[][..],
        (1, true) => &["root"],
        (1, false) => &["redop"],
        _ => &["redop", "root"],
    });
    // An integer in the wrong column is a count, anything else a magnitude.
    (0..groups).for_each(|_| words.extend(["time", "algbw", "busbw", "error"]));
    title_layout(&words)?.ok()
}

const ROW_HELP: &str = "rows of nccl-tests are size, count, type, [redop, root,] then time, algbw, \
                        busbw and #wrong, out-of-place and in-place; fix or delete this line";

fn error(span: Span, message: impl Into<String>, label: &str, help: &str) -> Diagnostic {
    Diagnostic::error(Code::NcclTestsLog, span, message)
        .label(label)
        .help(help)
}

/// A word of a line and its byte offset in the file.
type Field<'a> = (usize, &'a str);

/// The words of `line` (split at ASCII whitespace) with their byte offsets (`start`: the line's).
fn fields(start: usize, line: &str) -> Vec<Field<'_>> {
    let mut at = start;
    let words = line.split(|c: char| c.is_ascii_whitespace()).map(|w| {
        at += w.len() + 1;
        (at - w.len() - 1, w)
    });
    words.filter(|f| !f.1.is_empty()).collect()
}

fn num<T: std::str::FromStr>(file: FileId, f: Field, what: &str) -> Result<T, Diagnostic> {
    // Not `inf` or `nan` either: every spelling of them has an n.
    let parsed = f.1.parse().ok().filter(|_| !f.1.contains(['n', 'N']));
    parsed.ok_or_else(|| {
        let message = format!("`{}` in the {what} column is not a number", f.1);
        let span = Span::new(file, f.0, f.0 + f.1.len());
        error(span, message, "not a number", ROW_HELP)
    })
}

/// Reads the group of columns that `fs` starts with: None when time, algbw and busbw are `N/A`.
fn measure(file: FileId, fs: &[Field], l: &Layout) -> Result<Option<Measure>, Diagnostic> {
    let get = |i: usize| fs.get(i).copied().unwrap_or_default();
    if (0..3).all(|i| get(i).1 == "N/A") {
        return Ok(None);
    }
    let time_us = num::<f64>(file, get(0), "time")? * l.time_scale;
    let (algbw, busbw) = (num(file, get(1), "algbw")?, num(file, get(2), "busbw")?);
    let wrong = match (get(3).1, get(3).1.parse::<u64>()) {
        ("N/A", _) => None,
        (_, Ok(n)) => Some(n),
        // `%g` prints a large count with an exponent; an `error` column holds a magnitude.
        _ => Some(num::<f64>(file, get(3), "#wrong")?)
            .filter(|x| l.counts && *x >= 0.0)
            .map(|x| x.round() as u64),
    };
    Ok(Some(Measure {
        time_us,
        algbw,
        busbw,
        wrong,
    }))
}

fn parse_row(file: FileId, span: Span, fs: &[Field], l: &Layout) -> Result<Row, Diagnostic> {
    let width = l.lead + l.groups * l.group_len + l.tail;
    if fs.len() != width {
        let message = format!("this row has {} columns, not {width}", fs.len());
        return Err(error(span, message, "wrong number of columns", ROW_HELP));
    }
    let get = |i: usize| fs.get(i).copied().unwrap_or_default();
    let (bytes, count) = (num(file, get(0), "size")?, num(file, get(1), "count")?);
    let redop = l.redop.then(|| get(3).1.to_string());
    let root = l.root.then(|| get(l.lead - 1));
    let root = root.map(|f| num(file, f, "root")).transpose()?;
    let group = |g: usize| fs.get(l.lead + g * l.group_len..).unwrap_or_default();
    let out_of_place = measure(file, group(0), l)?;
    let in_place = (l.groups == 2).then(|| measure(file, group(1), l));
    let in_place = in_place.transpose()?.flatten();
    let dtype = get(2).1.to_string();
    Ok(Row {
        span,
        bytes,
        count,
        dtype,
        redop,
        root,
        out_of_place,
        in_place,
    })
}

/// The value of `key` in a word `NAME=VALUE` or in NCCL's `NAME set by environment to VALUE`.
fn setting(words: &[&str], key: &str) -> Option<String> {
    let by_env = ["set", "by", "environment", "to"];
    words.iter().enumerate().find_map(|(i, w)| {
        let w = w.trim_matches(['"', '\'']);
        let value = match w.strip_prefix(key)?.strip_prefix('=') {
            Some(v) => v,
            None if w == key && words.get(i + 1..i + 5) == Some(&by_env[..]) => words.get(i + 5)?,
            None => return None,
        };
        let value = value.trim_matches(['"', '\'', ',', ';']);
        (!value.is_empty()).then(|| value.to_string())
    })
}

#[derive(Default)]
struct Parser {
    file: FileId,
    tables: Vec<Table>,
    algo: Option<String>,
    proto: Option<String>,
    diags: Vec<Diagnostic>,
    /// The table being read; its layout is None for a title collc cannot read (reported).
    open: Option<(Table, Option<Layout>)>,
    /// The `Rank` numbers of the current run's device lines.
    ranks: BTreeSet<u64>,
    /// The `nThread` line of a run that has no table yet.
    header: Option<Span>,
    /// Whether the open table has had a row, read or not.
    had_row: bool,
}

impl Parser {
    fn line(&mut self, start: usize, line: &str, terminated: bool) {
        let span = Span::new(self.file, start, start + line.len());
        let fs = fields(start, line);
        let words: Vec<&str> = fs.iter().map(|f| f.1).collect();
        self.algo = self.algo.take().or_else(|| setting(&words, "NCCL_ALGO"));
        self.proto = self.proto.take().or_else(|| setting(&words, "NCCL_PROTO"));
        let comment = words.first().is_some_and(|w| w.starts_with('#'));
        let words = match words.split_first() {
            Some((&"#", rest)) => rest,
            _ => &words[..],
        };
        match words {
            ["nThread", ..] => {
                self.close();
                self.ranks.clear();
                self.header = Some(span);
            }
            ["Rank", n, ..] if comment => self.ranks.extend(n.parse::<u64>().ok()),
            ["Out", "of", "bounds", ..] | ["Avg", "bus", "bandwidth", ..] => self.close(),
            _ if comment => match title_layout(words) {
                Some(Ok(layout)) => self.start(span, Some(layout)),
                Some(Err(cols)) => {
                    let message = format!("a table with {cols}, which nccl-tests does not print");
                    let help = "give collc the unedited output of an nccl-tests binary";
                    self.diags
                        .push(error(span, message, "unknown columns", help));
                    self.start(span, None);
                }
                None => {}
            },
            [first, ..] if first.bytes().all(|b| b.is_ascii_digit()) => {
                self.row(span, &fs, terminated)
            }
            _ => {}
        }
    }

    fn start(&mut self, span: Span, layout: Option<Layout>) {
        self.close();
        (self.header, self.had_row) = (None, false);
        let ranks = u32::try_from(self.ranks.len()).ok().filter(|&n| n > 0);
        let table = Table {
            span,
            ranks,
            collective: None,
            rows: Vec::new(),
        };
        self.open = Some((table, layout));
    }

    fn row(&mut self, span: Span, fs: &[Field], terminated: bool) {
        if self.open.is_none() {
            if let Some(layout) = guess_layout(fs) {
                self.start(span, Some(layout));
            }
        }
        self.had_row = true;
        let result = match &mut self.open {
            Some((_, None)) => return,
            Some((table, Some(l))) => parse_row(self.file, span, fs, l).map(|r| table.rows.push(r)),
            None => {
                let message = format!("a row of {} columns outside any table", fs.len());
                Err(error(span, message, "not a row of nccl-tests", ROW_HELP))
            }
        };
        let Err(d) = result else {
            return;
        };
        if terminated {
            self.diags.push(d);
        } else {
            let help = "the run was interrupted or the file was cut: rerun the test, or delete \
                        the last line";
            let message = "the log ends in the middle of this row";
            self.diags.push(error(span, message, "cut short", help));
        }
    }

    fn close(&mut self) {
        let Some((mut table, Some(_))) = self.open.take() else {
            return;
        };
        if !self.had_row {
            let help = "the run stopped before measuring (look for NCCL WARN lines above), or the \
                        log was cut: rerun the test, or delete the header";
            let message = "this table has no rows: the run printed no results";
            self.diags.push(error(table.span, message, "no row", help));
            return;
        }
        table.collective = table.ranks.and_then(|n| infer(&table.rows, n));
        self.tables.push(table);
    }
}

/// Reads `text` (the file `file` of a SourceMap): every table, or the diagnostics of every
/// malformed line (all of them, not just the first). A log with no table at all is an error.
pub fn parse(file: FileId, text: &str) -> Result<Log, Vec<Diagnostic>> {
    let mut p = Parser {
        file,
        ..Parser::default()
    };
    let mut start = 0;
    for raw in text.split_inclusive('\n') {
        let line = raw.trim_end_matches(['\n', '\r']);
        p.line(start, line, raw.ends_with('\n'));
        start += raw.len();
    }
    p.close();
    if let Some(span) = p.header {
        let help = "the run stopped before measuring (look for NCCL WARN lines), or the log was \
                    cut: rerun the test, or delete this run's header";
        let message = "the log ends after a run's header, before its results";
        p.diags.push(error(span, message, "no table follows", help));
    } else if p.tables.is_empty() && p.diags.is_empty() {
        let span = Span::new(file, 0, text.find('\n').unwrap_or(text.len()));
        let help = "give collc the standard output of an nccl-tests binary such as \
                    all_reduce_perf, with its `#  size  count  type ...` title and rows";
        let message = "this is not an nccl-tests log: it has no table of results";
        p.diags.push(error(span, message, "no table", help));
    }
    let (tables, algo, proto) = (p.tables, p.algo, p.proto);
    if p.diags.is_empty() {
        Ok(Log {
            tables,
            algo,
            proto,
        })
    } else {
        Err(p.diags)
    }
}

/// The collective a table measured, from busbw/algbw of its rows and its redop, given the rank
/// count n: busbw = algbw x 2(n-1)/n is allreduce; (n-1)/n is allgather (redop none or absent)
/// or reduce_scatter (redop sum/prod/min/max/avg); 1 is broadcast (redop none) or reduce
/// (redop set). Only measures with algbw >= 1.00 count (the columns have 2 decimals), each within
/// 2% of the factor. A root column also counts when it is there: -1 for allreduce, allgather and
/// reduce_scatter, a rank for broadcast and reduce (so sendrecv, gather and scatter are not
/// mistaken for them; alltoall does read as allgather). None when undecidable.
pub fn infer(rows: &[Row], n: u32) -> Option<CollectiveKind> {
    if n == 0 {
        return None;
    }
    let measures = rows
        .iter()
        .flat_map(|r| [r.out_of_place, r.in_place])
        .flatten();
    let precise = measures.filter(|m| m.algbw >= 1.0 && m.algbw.is_finite() && m.busbw.is_finite());
    let ratios: Vec<f64> = precise.map(|m| m.busbw / m.algbw).collect();
    if ratios.is_empty() {
        return None;
    }
    // Whether all rows do (true), none do (false), or some do (undecidable).
    let all_or_none = |f: &dyn Fn(&Row) -> bool| {
        let any = rows.iter().any(f);
        (any == rows.iter().all(f)).then_some(any)
    };
    let reduces = all_or_none(&|r| r.redop.as_deref().is_some_and(|o| o != "none"))?;
    let rooted = match all_or_none(&|r| r.root.is_none())? {
        true => None,
        false => Some(all_or_none(&|r| r.root.is_some_and(|x| x >= 0))?),
    };
    let share = (f64::from(n) - 1.0) / f64::from(n);
    let kinds = [
        (CollectiveKind::Allreduce, 2.0 * share, true, false),
        (CollectiveKind::ReduceScatter, share, true, false),
        (CollectiveKind::Allgather, share, false, false),
        (CollectiveKind::Reduce, 1.0, true, true),
        (CollectiveKind::Broadcast, 1.0, false, true),
    ];
    let mut fits = kinds.iter().filter(|(_, factor, red, root)| {
        *red == reduces
            && rooted.is_none_or(|r| r == *root)
            && ratios.iter().all(|x| (x - factor).abs() <= 0.02 * factor)
    });
    match (fits.next(), fits.next()) {
        (Some((kind, ..)), None) => Some(*kind),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
