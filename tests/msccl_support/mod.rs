//! Shared by the MSCCL tests that derive broken XMLs from correct ones by one textual edit.

/// Replaces the first `from` after the first occurrence of `after`.
pub fn edit(text: &str, after: &str, from: &str, to: &str) -> String {
    let a = text.find(after).unwrap_or_else(|| panic!("no `{after}`"));
    let k = a + text[a..]
        .find(from)
        .unwrap_or_else(|| panic!("no `{from}` after `{after}`"));
    format!("{}{to}{}", &text[..k], &text[k + from.len()..])
}
