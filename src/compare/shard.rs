//! Sweeps that spread: `collc compare --shard K/N` evaluates only the rows `K-1, K-1+N, ...` of
//! a sweep (sizes, or `--vary` values) and writes them as a part (JSON); `collc compare --merge
//! PARTS...`, with the same file and flags, puts the parts back together and prints what one
//! run without shards prints, byte for byte.
//!
//! A part holds a fingerprint of the sweep (topology, collective, ranks, type, the model's
//! description, the families, the rows' sizes and `--vary` values), so parts of another sweep
//! are refused, and its cells with every figure as the bits of its `f64`, so nothing is lost
//! in decimal. [`Split`] tells [`super::compare_split`] which cells to evaluate and which it is
//! given, and when to stop evaluating them (a cancel flag another thread may set).

use super::{Axis, Cell, Comparison, label};
use crate::diag::Code;
use rustc_hash::FxHashMap;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The format's name and version in every part.
const FORMAT: &str = "collc compare part 1";

/// Which cells of a sweep to evaluate: all (the default), the rows of one shard (`index` of
/// `count`, from 0), or none, every cell given (merging parts); and a flag that, once another
/// thread sets it, stops the sweep before its next cell (E0061).
#[derive(Debug, Clone, Default)]
pub struct Split {
    pub shard: Option<(usize, usize)>,
    pub given: Option<FxHashMap<(usize, usize), Cell>>,
    pub cancel: Option<Arc<AtomicBool>>,
}

impl Split {
    /// Whether the sweep was asked to stop.
    pub fn cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
    }

    /// Whether this split evaluates row `row`.
    pub fn runs(&self, row: usize) -> bool {
        match self.shard {
            Some((k, n)) => row % n == k,
            None => true,
        }
    }
}

/// `K/N` (1 <= K <= N) as the shard's index from 0 and the count.
pub fn parse(spec: &str) -> Result<(usize, usize), String> {
    let (k, n) = spec
        .split_once('/')
        .ok_or_else(|| format!("`{spec}` is not K/N"))?;
    let (k, n): (usize, usize) = (
        k.trim()
            .parse()
            .map_err(|_| format!("`{k}` is not a count"))?,
        n.trim()
            .parse()
            .map_err(|_| format!("`{n}` is not a count"))?,
    );
    if n == 0 || k == 0 || k > n {
        return Err(format!("shard {k} of {n}: K runs from 1 to N"));
    }
    Ok((k - 1, n))
}

/// What identifies a sweep: everything its output depends on but the cells.
pub fn fingerprint(c: &Comparison) -> String {
    let axis = match &c.axis {
        Axis::Size => "size".to_string(),
        Axis::Param { names, points } => format!(
            "vary {}: {}",
            names.join(","),
            points
                .iter()
                .map(|p| format!("{} ({})", p.values.join(","), p.engine.describe()))
                .collect::<Vec<_>>()
                .join("; ")
        ),
    };
    format!(
        "{} {} of {} x {} over {} ranks; {}; families {}; rows {}; {axis}",
        c.topology,
        c.kind.name(),
        c.dtype.name(),
        c.sizes.len(),
        c.ranks,
        c.engine.describe(),
        c.families.iter().map(label).collect::<Vec<_>>().join(", "),
        c.sizes
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join(",")
    )
}

fn bits(x: f64) -> String {
    format!("{:016x}", x.to_bits())
}

fn unbits(v: &Value) -> Option<f64> {
    u64::from_str_radix(v.as_str()?, 16)
        .ok()
        .map(f64::from_bits)
}

/// The part of shard `index` (from 0) of `count`: the cells of its rows.
pub fn part(c: &Comparison, index: usize, count: usize) -> String {
    let mut cells = Vec::new();
    for (r, row) in c.cells.iter().enumerate() {
        if r % count != index {
            continue;
        }
        for (f, cell) in row.iter().enumerate() {
            let v = match cell {
                Cell::Done {
                    seconds,
                    algbw,
                    busbw,
                } => {
                    json!({"row": r, "family": f, "seconds": bits(*seconds), "algbw": bits(*algbw), "busbw": bits(*busbw)})
                }
                Cell::Failed { code, message } => {
                    json!({"row": r, "family": f, "code": code.as_str(), "message": message})
                }
            };
            cells.push(v);
        }
    }
    let v = json!({
        "format": FORMAT,
        "shard": [index + 1, count],
        "fingerprint": fingerprint(c),
        "cells": cells,
    });
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
    s.push('\n');
    s
}

/// One part read back: its shard (index from 0, count), fingerprint and cells.
pub struct Part {
    pub shard: (usize, usize),
    pub fingerprint: String,
    pub cells: Vec<((usize, usize), Cell)>,
}

/// Reads a part written by [`part`].
pub fn read(text: &str) -> Result<Part, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    if v["format"].as_str() != Some(FORMAT) {
        return Err(format!(
            "not a part of `collc compare --shard` (no \"format\": \"{FORMAT}\")"
        ));
    }
    let num = |x: &Value| x.as_u64().map(|n| n as usize);
    let shard = match (num(&v["shard"][0]), num(&v["shard"][1])) {
        (Some(k), Some(n)) if k >= 1 && k <= n => (k - 1, n),
        _ => return Err("its \"shard\" is not [K, N]".into()),
    };
    let fingerprint = v["fingerprint"]
        .as_str()
        .ok_or("no \"fingerprint\"")?
        .to_string();
    let mut cells = Vec::new();
    for (i, c) in v["cells"]
        .as_array()
        .ok_or("no \"cells\"")?
        .iter()
        .enumerate()
    {
        let bad = || format!("cell {i} is malformed");
        let (row, family) = (
            num(&c["row"]).ok_or_else(bad)?,
            num(&c["family"]).ok_or_else(bad)?,
        );
        let cell = if let Some(code) = c["code"].as_str() {
            Cell::Failed {
                code: Code::parse(code).ok_or_else(bad)?,
                message: c["message"].as_str().ok_or_else(bad)?.to_string(),
            }
        } else {
            Cell::Done {
                seconds: unbits(&c["seconds"]).ok_or_else(bad)?,
                algbw: unbits(&c["algbw"]).ok_or_else(bad)?,
                busbw: unbits(&c["busbw"]).ok_or_else(bad)?,
            }
        };
        cells.push(((row, family), cell));
    }
    Ok(Part {
        shard,
        fingerprint,
        cells,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_are_one_based_and_bounded() {
        assert_eq!(parse("1/3"), Ok((0, 3)));
        assert_eq!(parse("3/3"), Ok((2, 3)));
        assert!(parse("0/3").is_err() && parse("4/3").is_err() && parse("3").is_err());
        let s = Split {
            shard: Some((1, 3)),
            ..Split::default()
        };
        assert!(s.runs(1) && s.runs(4) && !s.runs(0) && !s.runs(2));
    }

    #[test]
    fn figures_survive_as_bits() {
        for x in [0.1 + 0.2, 1e-300, 123456.789e9, f64::MIN_POSITIVE] {
            assert_eq!(unbits(&Value::String(bits(x))), Some(x));
        }
    }
}
