//! SVG charts with `plotters`' SVG backend (no system fonts: text is written as SVG `<text>`
//! for the viewer to render, and the naive font metrics only place it). Everything is integer
//! pixel coordinates and fixed colours, so the same chart gives the same bytes.
//!
//! - [`lines`]: a rate against a message size on log-log axes, one line per series ([`svg`]),
//!   told apart by [`marks`] (colours, markers, dashes and notes where lines overlap).
//! - [`bars`]: distributions and bars with ranges, in the same style.
//!
//! Every chart opens with a title and a subtitle ([`heading`]; say there which model made the
//! figures), both wrapped over as many lines as they need, so neither is cut at the edge.

pub mod bars;
pub mod lines;
pub mod marks;

pub use lines::{Chart, Series, svg};

use plotters::prelude::*;

/// Width and height in pixels.
pub const SIZE: (u32, u32) = (1000, 640);

/// Series colours, in order (Tableau 10); series past the tenth reuse them.
pub const COLORS: [(u8, u8, u8); 10] = [
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
];

/// The colour of series `i`.
pub fn color(i: usize) -> RGBColor {
    let (r, g, b) = COLORS[i % COLORS.len()];
    RGBColor(r, g, b)
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;
type Failure<'a> = DrawingAreaErrorKind<<SVGBackend<'a> as DrawingBackend>::ErrorType>;

/// Characters of title per line: the chart is 1000 px wide, less 24 px on each side, at
/// about 14.5 px a character of the 26 px font.
const TITLE_LINE: usize = 65;
/// Characters of subtitle per line, at about 9 px a character of the 16 px font.
const SUBTITLE_LINE: usize = 105;

/// True for a word that is a number, such as `512`, `(1024` or `x4`: the word after it (its
/// unit) stays on its line.
fn number(word: &str) -> bool {
    let w = word.trim_start_matches(['(', 'x']);
    !w.is_empty() && w.chars().all(|c| c.is_ascii_digit() || c == '.')
}

/// `text` in lines of at most `width` characters, broken at spaces but not after a number
/// (`512 KiB`, `100 ns` stay whole; a longer piece keeps a line of its own). Charts' headings
/// and `collc compare`'s table wrap their prose with it.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut pieces: Vec<String> = Vec::new();
    let mut glue = false;
    for word in text.split(' ') {
        match pieces.last_mut() {
            Some(last) if glue => {
                last.push(' ');
                last.push_str(word);
            }
            _ => pieces.push(word.to_string()),
        }
        glue = number(word);
    }
    let mut lines: Vec<String> = Vec::new();
    for piece in pieces {
        match lines.last_mut() {
            Some(l) if l.chars().count() + 1 + piece.chars().count() <= width => {
                l.push(' ');
                l.push_str(&piece);
            }
            _ => lines.push(piece),
        }
    }
    lines
}

/// Draws a title and a subtitle on white, each wrapped over as many lines as it needs; the
/// area below them.
fn heading<'a>(root: &Area<'a>, title: &str, subtitle: &str) -> Result<Area<'a>, Failure<'a>> {
    root.fill(&WHITE)?;
    let titles = wrap(title, TITLE_LINE);
    let subtitles = wrap(subtitle, SUBTITLE_LINE);
    let below_title = 12 + 32 * titles.len() as i32;
    let height = below_title + 6 + 22 * subtitles.len().max(1) as i32;
    let (head, body) = root.split_vertically(height as u32);
    for (i, line) in titles.into_iter().enumerate() {
        head.draw(&Text::new(
            line,
            (24, 12 + 32 * i as i32),
            ("sans-serif", 26).into_font().color(&BLACK),
        ))?;
    }
    for (i, line) in subtitles.into_iter().enumerate() {
        head.draw(&Text::new(
            line,
            (24, below_title + 22 * i as i32),
            ("sans-serif", 16).into_font().color(&RGBColor(80, 80, 80)),
        ))?;
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn long_text_wraps_at_spaces_but_not_inside_a_quantity() {
        let text = ["model"; 40].join(" ");
        let lines = wrap(&text, 30);
        assert!(lines.iter().all(|l| l.len() <= 30), "{lines:?}");
        assert_eq!(lines.join(" "), text);
        assert_eq!(wrap("short", 30), ["short"]);
        let word = "w".repeat(40);
        assert_eq!(wrap(&format!("a {word} b"), 30), ["a", word.as_str(), "b"]);
        let unit = format!("{} at 512 KiB", "w".repeat(24));
        assert_eq!(wrap(&unit, 30)[1], "512 KiB", "a size stays whole");
    }
}
