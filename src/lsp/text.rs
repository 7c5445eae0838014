//! Positions: byte offsets (what collc's spans hold) to LSP positions and back.
//!
//! LSP positions are a zero-based line and a column counted in UTF-16 code units (the protocol's
//! default encoding, the only one every client supports). [`LineIndex`] records where each line
//! starts so that a conversion costs one binary search plus a walk over one line. Offsets past
//! the end clamp to the end; a column past the end of its line clamps to the line's end, and an
//! offset inside a multi-byte character rounds down to the character's start, so a conversion
//! never panics whatever the client or a stale span says.

use lsp_types::{Position, Range};

/// Line starts of one text.
#[derive(Debug, Clone)]
pub struct LineIndex {
    starts: Vec<usize>,
    len: usize,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex {
            starts,
            len: text.len(),
        }
    }

    /// The LSP position of a byte offset.
    pub fn position(&self, text: &str, offset: usize) -> Position {
        let mut offset = offset.min(self.len).min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = match self.starts.binary_search(&offset) {
            Ok(l) => l,
            Err(l) => l.saturating_sub(1),
        };
        let start = self.starts.get(line).copied().unwrap_or(0).min(offset);
        let col: usize = text[start..offset].chars().map(char::len_utf16).sum();
        Position::new(line as u32, col as u32)
    }

    /// The LSP range of a byte range.
    pub fn range(&self, text: &str, start: usize, end: usize) -> Range {
        Range::new(
            self.position(text, start),
            self.position(text, end.max(start)),
        )
    }

    /// The byte offset of an LSP position (clamped into the text).
    pub fn offset(&self, text: &str, pos: Position) -> usize {
        let Some(&start) = self.starts.get(pos.line as usize) else {
            return text.len();
        };
        let end = self
            .starts
            .get(pos.line as usize + 1)
            .map(|e| e - 1)
            .unwrap_or(text.len())
            .min(text.len());
        let line = text.get(start..end).unwrap_or("");
        let mut units = 0usize;
        for (i, c) in line.char_indices() {
            if units >= pos.character as usize {
                return start + i;
            }
            units += c.len_utf16();
        }
        end
    }

    /// The position just past the last character.
    pub fn end(&self, text: &str) -> Position {
        self.position(text, text.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_columns() {
        let text = "a\n\u{e9}x\u{1f600}y\n";
        let ix = LineIndex::new(text);
        assert_eq!(ix.position(text, 0), Position::new(0, 0));
        assert_eq!(ix.position(text, 2), Position::new(1, 0));
        // é is 2 bytes, 1 UTF-16 unit; the emoji is 4 bytes, 2 units.
        assert_eq!(ix.position(text, 4), Position::new(1, 1));
        assert_eq!(ix.position(text, 9), Position::new(1, 4));
        assert_eq!(ix.offset(text, Position::new(1, 4)), 9);
        assert_eq!(ix.offset(text, Position::new(1, 99)), 10);
        assert_eq!(ix.offset(text, Position::new(9, 0)), text.len());
        // Inside the emoji: rounds down.
        assert_eq!(ix.position(text, 6), Position::new(1, 2));
        assert_eq!(ix.position(text, 999), Position::new(2, 0));
    }
}
