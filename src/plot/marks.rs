//! How a line chart's series are told apart ([`super::lines`]): a colour and a marker each
//! ([`with_marker!`]), dashes and a legend note where a line overlaps an earlier one
//! ([`overlap`], [`legend`]), and the legend in the corner where it hides the least of the
//! lines ([`corner`]).
//!
//! Two series can coincide (recursive doubling and multiplying often take the same time): a
//! line drawn over another would hide it. Where a series meets an earlier one (a point at
//! the same size within [`SAME`] of its rate) it is drawn dashed, the earlier line showing
//! between the dashes and its marker around the later one's (the markers alternate filled
//! and hollow, small and large), and its legend entry says which line it overlaps and where.

use plotters::prelude::SeriesLabelPosition;
use std::ops::Range;

/// Two rates at one size whose ratio is below this are drawn within a pixel or two of each
/// other: the points overlap.
pub const SAME: f64 = 1.01;

/// Runs `$body` with `$m` bound to a function making series `$k`'s marker in colour `$col`,
/// centred on the origin (placed with `EmptyElement::at(point) + $m()`): eight shapes, filled
/// and hollow, small and large in turn, on integer pixel offsets. (A macro: each shape is
/// its own element type.)
macro_rules! with_marker {
    ($k:expr, $col:expr, |$m:ident| $body:expr) => {{
        let (filled, hollow) = ($col.filled(), $col.stroke_width(2));
        match $k % 8 {
            0 => {
                let $m = move || Circle::new((0, 0), 4, filled);
                $body
            }
            1 => {
                let $m = move || Rectangle::new([(-5, -5), (5, 5)], hollow);
                $body
            }
            2 => {
                let $m = move || Polygon::new(vec![(0, -6), (6, 4), (-6, 4)], filled);
                $body
            }
            3 => {
                let $m = move || Cross::new((0, 0), 5, hollow);
                $body
            }
            4 => {
                let $m = move || Circle::new((0, 0), 7, hollow);
                $body
            }
            5 => {
                let $m = move || Rectangle::new([(-3, -3), (3, 3)], filled);
                $body
            }
            6 => {
                let $m = move || PathElement::new(vec![(0, -8), (8, 5), (-8, 5), (0, -8)], hollow);
                $body
            }
            _ => {
                let $m = move || Polygon::new(vec![(0, -6), (6, 0), (0, 6), (-6, 0)], filled);
                $body
            }
        }
    }};
}
pub(super) use with_marker;

/// Where line `j` overlaps earlier ones: the earlier line it meets at the most points (the
/// first of those that tie), a point meeting one at the same size within [`SAME`] of its rate,
/// and the indices of `lines[j]`'s points that meet it.
pub fn overlap(lines: &[Vec<(f64, f64)>], j: usize) -> Option<(usize, Vec<usize>)> {
    let mut best: Option<(usize, Vec<usize>)> = None;
    for i in 0..j {
        let met: Vec<usize> = lines[j]
            .iter()
            .enumerate()
            .filter(|(_, p)| {
                lines[i]
                    .iter()
                    .any(|q| q.0 == p.0 && (p.1 / q.1).max(q.1 / p.1) < SAME)
            })
            .map(|(k, _)| k)
            .collect();
        if !met.is_empty() && best.as_ref().is_none_or(|b| met.len() > b.1.len()) {
            best = Some((i, met));
        }
    }
    best
}

/// Line `j`'s legend entry: `names[j]`, and the line it overlaps and where (`from 32 KiB`,
/// `from 8 KiB to 1 MiB`, `at 1 KiB`, `at 3 of 7 sizes`; nothing more when it overlaps at
/// every size), sizes written by `size`.
pub fn legend(
    names: &[String],
    lines: &[Vec<(f64, f64)>],
    j: usize,
    size: fn(u64) -> String,
) -> String {
    let name = &names[j];
    let Some((i, met)) = overlap(lines, j) else {
        return name.clone();
    };
    let at = |k: usize| size(lines[j][k].0.round() as u64);
    let (n, first, last) = (lines[j].len(), met[0], met[met.len() - 1]);
    let span = if met.len() == n {
        String::new()
    } else if met.len() == 1 {
        format!(" at {}", at(first))
    } else if last - first + 1 != met.len() {
        format!(" at {} of {n} sizes", met.len())
    } else if last + 1 == n {
        format!(" from {}", at(first))
    } else {
        format!(" from {} to {}", at(first), at(last))
    };
    format!("{name} (overlaps {}{span})", names[i])
}

/// Pixels of a legend row, and of a character of its 18 px font (plotters' own legend).
const ROW: i32 = 24;
const CHAR: i32 = 10;

/// The legend's width and height in pixels for `entries`: a sample 40 px wide, the text,
/// margins (estimates from the font's size: SVG text is measured by the viewer).
pub fn legend_size(entries: &[String]) -> (i32, i32) {
    let chars = entries.iter().map(|e| e.chars().count()).max().unwrap_or(0);
    (60 + CHAR * chars as i32, 12 + ROW * entries.len() as i32)
}

/// The corner of the plotting area `(xs, ys)` (pixels) where a legend of `size` covers the
/// fewest samples of `lines` (each line's points in pixels, 16 samples along each segment):
/// the lower right first (rates grow with size, so it is often empty), then the upper left,
/// the upper right and the lower left.
pub fn corner(
    lines: &[Vec<(i32, i32)>],
    (xs, ys): (Range<i32>, Range<i32>),
    (w, h): (i32, i32),
) -> SeriesLabelPosition {
    let gap = 10;
    let boxes = [
        (
            SeriesLabelPosition::LowerRight,
            xs.end - gap - w,
            ys.end - gap - h,
        ),
        (
            SeriesLabelPosition::UpperLeft,
            xs.start + gap,
            ys.start + gap,
        ),
        (
            SeriesLabelPosition::UpperRight,
            xs.end - gap - w,
            ys.start + gap,
        ),
        (
            SeriesLabelPosition::LowerLeft,
            xs.start + gap,
            ys.end - gap - h,
        ),
    ];
    let samples: Vec<(i32, i32)> = lines
        .iter()
        .flat_map(|l| {
            let ends = l.windows(2).flat_map(|s| {
                let ((ax, ay), (bx, by)) = (s[0], s[1]);
                (0..16).map(move |t| (ax + (bx - ax) * t / 16, ay + (by - ay) * t / 16))
            });
            ends.chain(l.last().copied())
        })
        .collect();
    let mut best = (SeriesLabelPosition::LowerRight, usize::MAX);
    for (pos, x, y) in boxes {
        let covered = samples
            .iter()
            .filter(|p| (x..x + w).contains(&p.0) && (y..y + h).contains(&p.1))
            .count();
        if covered < best.1 {
            best = (pos, covered);
        }
    }
    best.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlaps_are_found_and_named_with_their_sizes() {
        let a = vec![(1.0, 1.0), (2.0, 2.0), (4.0, 3.0), (8.0, 4.0)];
        let b = vec![(1.0, 5.0), (2.0, 2.001), (4.0, 3.0), (8.0, 4.0)];
        let c = vec![(1.0, 5.0), (2.0, 9.0), (4.0, 9.0), (8.0, 9.0)];
        let lines = vec![a.clone(), b, c, a];
        assert_eq!(overlap(&lines, 0), None);
        assert_eq!(overlap(&lines, 1), Some((0, vec![1, 2, 3])));
        assert_eq!(overlap(&lines, 2), Some((1, vec![0])));
        assert_eq!(
            overlap(&lines, 3),
            Some((0, vec![0, 1, 2, 3])),
            "the most points"
        );
        let names: Vec<String> = ["a", "b", "c", "d"].map(String::from).into();
        let size: fn(u64) -> String = |b| format!("{b} B");
        assert_eq!(legend(&names, &lines, 0, size), "a");
        assert_eq!(legend(&names, &lines, 1, size), "b (overlaps a from 2 B)");
        assert_eq!(legend(&names, &lines, 2, size), "c (overlaps b at 1 B)");
        assert_eq!(legend(&names, &lines, 3, size), "d (overlaps a)");
    }

    #[test]
    fn the_legend_goes_where_the_lines_are_not() {
        let area = (0..1000, 0..500);
        let size = (200, 100);
        // A line along the bottom, rising at the right: the upper left is free.
        let rising = vec![vec![(0, 490), (800, 490), (1000, 0)]];
        assert!(matches!(
            corner(&rising, area.clone(), size),
            SeriesLabelPosition::UpperLeft
        ));
        // A line along the top: the lower right comes first.
        let flat = vec![vec![(0, 5), (1000, 5)]];
        assert!(matches!(
            corner(&flat, area, size),
            SeriesLabelPosition::LowerRight
        ));
    }
}
