//! Exact solution of a sparse linear system near a float guess: Gaussian elimination over
//! rationals, row by row. Each new row is reduced by the pivots so far; an empty row with a
//! nonzero right-hand side means the system is inconsistent (None). Pivots are taken on the
//! column whose guess is largest, so the variables left free are those the guess puts near
//! zero; free variables get their guess snapped to the simplest nearby rational, and the
//! pivots follow by back-substitution. Used to turn a float vertex (primal) and its
//! complementary-slackness system (dual) into exact rationals.

use super::exact::snap;
use num_rational::BigRational;
use num_traits::{Signed, Zero};

/// A sparse row: (column, coefficient) sorted by column, nonzero coefficients only.
pub type Row = Vec<(usize, BigRational)>;

/// `a - f * b` for sorted sparse rows.
fn sub_scaled(a: &Row, f: &BigRational, b: &Row) -> Row {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let take_a = j >= b.len() || (i < a.len() && a[i].0 < b[j].0);
        let take_b = i >= a.len() || (j < b.len() && b[j].0 < a[i].0);
        if take_a {
            out.push(a[i].clone());
            i += 1;
        } else if take_b {
            out.push((b[j].0, -(f * &b[j].1)));
            j += 1;
        } else {
            let v = &a[i].1 - f * &b[j].1;
            if !v.is_zero() {
                out.push((a[i].0, v));
            }
            i += 1;
            j += 1;
        }
    }
    out
}

fn coef(row: &Row, col: usize) -> Option<&BigRational> {
    row.binary_search_by_key(&col, |e| e.0)
        .ok()
        .map(|i| &row[i].1)
}

/// A solution of `rows` (each with its right-hand side) in `guess.len()` unknowns, or None when
/// the rows are inconsistent.
pub fn solve_near(rows: Vec<(Row, BigRational)>, guess: &[f64]) -> Option<Vec<BigRational>> {
    let mut pivots: Vec<(usize, Row, BigRational)> = Vec::new();
    let mut pivot_of = vec![usize::MAX; guess.len()];
    for (mut row, mut rhs) in rows {
        // Reduce by every earlier pivot the row touches, in creation order.
        for (col, prow, prhs) in &pivots {
            let Some(a) = coef(&row, *col) else {
                continue;
            };
            let Some(p) = coef(prow, *col) else {
                continue;
            };
            let f = a / p;
            row = sub_scaled(&row, &f, prow);
            rhs -= &f * prhs;
        }
        if row.is_empty() {
            if rhs.is_zero() {
                continue;
            }
            return None;
        }
        let col = row
            .iter()
            .map(|e| e.0)
            .max_by(|&a, &b| guess[a].abs().total_cmp(&guess[b].abs()).then(b.cmp(&a)))?;
        pivot_of[col] = pivots.len();
        pivots.push((col, row, rhs));
    }
    let mut x: Vec<Option<BigRational>> = vec![None; guess.len()];
    for (c, g) in guess.iter().enumerate() {
        if pivot_of[c] == usize::MAX {
            let v = snap(g.abs(), 1e-9)?;
            x[c] = Some(if *g < 0.0 { -v } else { v });
        }
    }
    for (col, row, rhs) in pivots.iter().rev() {
        let mut v = rhs.clone();
        let mut p = None;
        for (c, a) in row {
            if c == col {
                p = Some(a);
            } else {
                v -= a * x[*c].as_ref()?;
            }
        }
        x[*col] = Some(v / p?);
    }
    x.into_iter().collect()
}

/// True when every value is nonnegative.
pub fn nonnegative(x: &[BigRational]) -> bool {
    !x.iter().any(Signed::is_negative)
}
