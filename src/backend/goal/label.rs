//! GOAL op labels. A label is text (read from a GOAL file, or given by hand) or the name
//! [`super::from_ir`] gives IR op `i`: `op<i>`, and `op<i>_calc` for the calc of a
//! `recv_reduce`. The second kind is held as numbers, so that schedules of millions of ops need
//! no string per op; it is written, compared and checked exactly as its text.

use std::borrow::Cow;
use std::fmt;

#[derive(Debug, Clone)]
pub enum Label {
    Text(String),
    /// `op<op>`, then `_calc` when `calc` is set.
    Ir {
        op: u32,
        calc: bool,
    },
}

impl Label {
    /// Appends the label's text.
    pub fn write_to(&self, out: &mut String) {
        match self {
            Label::Text(t) => out.push_str(t),
            Label::Ir { .. } => {
                let mut b = Vec::with_capacity(24);
                self.put(&mut b);
                out.push_str(&String::from_utf8_lossy(&b));
            }
        }
    }

    /// Appends the label's text as bytes (the writer's buffers).
    pub(super) fn put(&self, out: &mut Vec<u8>) {
        match self {
            Label::Text(t) => out.extend_from_slice(t.as_bytes()),
            Label::Ir { op, calc } => {
                out.extend_from_slice(b"op");
                put_num(out, u64::from(*op));
                if *calc {
                    out.extend_from_slice(b"_calc");
                }
            }
        }
    }

    pub fn as_str(&self) -> Cow<'_, str> {
        match self {
            Label::Text(t) => Cow::Borrowed(t),
            Label::Ir { .. } => {
                let mut s = String::with_capacity(16);
                self.write_to(&mut s);
                Cow::Owned(s)
            }
        }
    }
}

/// Equal when written the same: `Label::Text("op3")` equals `Label::Ir { op: 3, calc: false }`.
impl PartialEq for Label {
    fn eq(&self, other: &Label) -> bool {
        match (self, other) {
            (Label::Ir { op: a, calc: x }, Label::Ir { op: b, calc: y }) => (a, x) == (b, y),
            _ => self.as_str() == other.as_str(),
        }
    }
}

impl Eq for Label {}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.as_str())
    }
}

impl From<String> for Label {
    fn from(s: String) -> Label {
        Label::Text(s)
    }
}

impl From<&str> for Label {
    fn from(s: &str) -> Label {
        Label::Text(s.to_string())
    }
}

/// Appends a decimal number without going through the formatting machinery (the writer emits
/// tens of millions of numbers for large schedules).
pub(super) fn put_num(out: &mut Vec<u8>, mut v: u64) {
    if v < 10 {
        out.push(b'0' + v as u8);
        return;
    }
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    while v >= 100 {
        let d = (v % 100) as usize;
        v /= 100;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGITS[2 * d..2 * d + 2]);
    }
    if v >= 10 {
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGITS[2 * v as usize..2 * v as usize + 2]);
    } else {
        i -= 1;
        buf[i] = b'0' + v as u8;
    }
    out.extend_from_slice(&buf[i..]);
}

/// "00" to "99".
const DIGITS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        for v in [
            0u64,
            7,
            10,
            99,
            100,
            101,
            999,
            1000,
            65535,
            1 << 40,
            u64::MAX,
        ] {
            let mut b = Vec::new();
            put_num(&mut b, v);
            assert_eq!(String::from_utf8(b).unwrap(), v.to_string());
        }
    }

    #[test]
    fn ir_labels_read_as_their_text() {
        let a = Label::Ir { op: 17, calc: true };
        assert_eq!(a.to_string(), "op17_calc");
        assert_eq!(a, Label::from("op17_calc"));
        assert_ne!(
            a,
            Label::Ir {
                op: 17,
                calc: false
            }
        );
        assert_eq!(Label::Ir { op: 0, calc: false }, Label::from("op0"));
        assert_ne!(
            Label::from("op1"),
            Label::Ir {
                op: 10,
                calc: false
            }
        );
    }
}
