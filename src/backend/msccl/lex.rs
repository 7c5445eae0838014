//! The executor reader's tag syntax (msccl-xml.md section 1.3, `msccl_parser.cc` l.18-160),
//! checked on the raw bytes of each start tag that quick-xml has already found well formed:
//! one line, the name, then ` name="value"` pairs separated by exactly one space, at most 16
//! attributes (`MAX_ATTR_COUNT`), at most 255 characters per name or value (`MAX_STR_LEN`).

use super::{At, Problem, limits};
use crate::diag::Code;

fn bad(at: usize, message: impl Into<String>, help: &str) -> Problem {
    Problem::new(Code::MscclInvalid, At::Byte(at), message, help)
}

/// Checks a start tag's raw text (`<` to `>`) against the executor reader's syntax: the name,
/// then ` name="value"` pairs separated by exactly one space, all on one line.
pub fn strict_tag(raw: &[u8], at: usize) -> Result<(), Problem> {
    let help = "write each start tag on one line as <name a=\"1\" b=\"2\">: single spaces between attributes, double quotes, no tabs or newlines";
    let inner = raw
        .strip_prefix(b"<")
        .and_then(|x| x.strip_suffix(b">"))
        .unwrap_or(raw);
    let inner = inner.strip_suffix(b"/").unwrap_or(inner);
    if let Some(k) = inner
        .iter()
        .position(|c| matches!(c, b'\n' | b'\r' | b'\t'))
    {
        let what = if inner[k] == b'\t' {
            "a tab"
        } else {
            "a line break"
        };
        return Err(bad(
            at + 1 + k,
            format!("{what} inside a tag; the executor's reader fails with \"expected >\""),
            help,
        ));
    }
    let name_end = inner.iter().position(|c| *c == b' ').unwrap_or(inner.len());
    let mut i = name_end;
    let mut count = 0;
    while i < inner.len() {
        // Exactly one space, a name, `=`, a double-quoted value.
        if inner[i] != b' ' || inner.get(i + 1).is_none_or(|c| *c == b' ' || *c == b'=') {
            return Err(bad(
                at + 1 + i,
                "attributes must be separated by exactly one space",
                help,
            ));
        }
        let eq = match inner[i + 1..].iter().position(|c| *c == b'=' || *c == b' ') {
            Some(k) if inner[i + 1 + k] == b'=' => i + 1 + k,
            _ => return Err(bad(at + 1 + i, "an attribute without `=\"value\"`", help)),
        };
        if eq - i - 1 > limits::MAX_STR_LEN {
            return Err(Problem::new(
                Code::MscclLimit,
                At::Byte(at + 1 + i),
                format!(
                    "an attribute name longer than {} characters",
                    limits::MAX_STR_LEN
                ),
                "the executor's reader keeps at most 255 characters per name or value",
            ));
        }
        if inner.get(eq + 1) != Some(&b'"') {
            return Err(bad(
                at + 2 + eq,
                "attribute values must be in double quotes",
                help,
            ));
        }
        let close = match inner[eq + 2..].iter().position(|c| *c == b'"') {
            Some(k) => eq + 2 + k,
            None => return Err(bad(at + 2 + eq, "an unterminated attribute value", help)),
        };
        if close - eq - 2 > limits::MAX_STR_LEN {
            return Err(Problem::new(
                Code::MscclLimit,
                At::Byte(at + 2 + eq),
                format!(
                    "an attribute value longer than {} characters",
                    limits::MAX_STR_LEN
                ),
                "the executor's reader keeps at most 255 characters per name or value",
            ));
        }
        count += 1;
        i = close + 1;
    }
    if count > 16 {
        return Err(Problem::new(
            Code::MscclLimit,
            At::Byte(at),
            format!(
                "{count} attributes; the executor's reader keeps only the first 16 (MAX_ATTR_COUNT)"
            ),
            "drop attributes the executor does not read",
        ));
    }
    Ok(())
}
