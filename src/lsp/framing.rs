//! LSP's base protocol read from a byte stream: `Content-Length` headers and JSON bodies, and
//! how the reader finds its way back after input that breaks the framing.
//!
//! - A body that is not JSON gets a `-32700` (parse error) answer with a null id; JSON that is
//!   not a request, response or notification a `-32600` (invalid request). A request whose `id`
//!   is not an integer or a string (an object, say) is a `-32600` with a null id; one whose id
//!   is a number collc cannot echo (a fraction, or beyond 32 bits) a `-32600` with that id.
//! - A `Content-Length` too long: a body that is a JSON object ends where the object closes
//!   ([`read_body`]), so the message is served as usual and the next frame is read from its
//!   header (nor does the reader wait for bytes that a client waiting for the answer will never
//!   send). Other bodies that swallowed the start of the next frame: a whole JSON value
//!   followed by what looks like a header is the message and the rest is read again; a body
//!   that does not parse and holds a `Content-Length` header part way is answered `-32700` up
//!   to the header, and reading goes on from the header.
//! - A `Content-Length` too short leaves the end of a body where a header should be: a line that
//!   is not a header gets one `-32700`, and reading skips to the next `Content-Length`, also
//!   when it starts part way along a line (bodies need not end in a newline).
//! - A length over [`MAX_BODY`] is a `-32700` while the body is skipped without being stored.
//!
//! Header lines are bytes, not text: invalid UTF-8 is garbage to skip, never an I/O error.

use lsp_server::Message;
use serde_json::Value;
use std::io::{BufRead, Read};

/// The largest body read into memory (a document of 64 MiB is far beyond what collc checks).
pub const MAX_BODY: usize = 64 << 20;

/// The longest header line read at once; a longer "line" is garbage, read in pieces.
const MAX_LINE: u64 = 4096;

/// One frame of input.
#[derive(Debug)]
pub enum Frame {
    Message(Message),
    /// What to answer instead: (code, message, id).
    Bad(i64, String, Value),
}

/// A reader with bytes pushed back in front of it, to read again as headers.
pub struct Input<R> {
    back: Vec<u8>,
    at: usize,
    inner: R,
}

impl<R: BufRead> Input<R> {
    pub fn new(inner: R) -> Input<R> {
        Input {
            back: Vec::new(),
            at: 0,
            inner,
        }
    }

    /// Makes `bytes` the next bytes read.
    fn unread(&mut self, bytes: &[u8]) {
        let mut v = bytes.to_vec();
        v.extend_from_slice(&self.back[self.at..]);
        self.back = v;
        self.at = 0;
    }
}

impl<R: BufRead> Read for Input<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = {
            let have = self.fill_buf()?;
            let n = have.len().min(buf.len());
            buf[..n].copy_from_slice(&have[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Input<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.at < self.back.len() {
            Ok(&self.back[self.at..])
        } else {
            self.inner.fill_buf()
        }
    }

    fn consume(&mut self, amt: usize) {
        if self.at < self.back.len() {
            self.at = (self.at + amt).min(self.back.len());
            if self.at == self.back.len() {
                self.back.clear();
                self.at = 0;
            }
        } else {
            self.inner.consume(amt);
        }
    }
}

fn parse_error(why: String) -> Frame {
    Frame::Bad(-32700, why, Value::Null)
}

/// Reads the next frame, and before it an answer to the garbage skipped to reach it; `None` at
/// the end of the input.
pub fn read_frames<R: BufRead>(r: &mut Input<R>) -> std::io::Result<Option<Vec<Frame>>> {
    let mut out = Vec::new();
    let mut size: Option<usize> = None;
    let mut line = Vec::new();
    loop {
        line.clear();
        if r.by_ref().take(MAX_LINE).read_until(b'\n', &mut line)? == 0 {
            return Ok((!out.is_empty()).then_some(out));
        }
        let l = trim_line(&line);
        if l.is_empty() {
            if size.is_some() {
                break;
            }
            continue;
        }
        let header = l.iter().position(|&b| b == b':').map(|c| l.split_at(c));
        match header {
            Some((name, value)) if name.trim_ascii().eq_ignore_ascii_case(b"content-length") => {
                let value = String::from_utf8_lossy(&value[1..]);
                size = value.trim().parse::<usize>().ok();
                if size.is_none() && out.is_empty() {
                    out.push(parse_error(format!(
                        "bad Content-Length `{}`",
                        shorten(value.trim())
                    )));
                }
            }
            Some((name, _)) if name.trim_ascii().eq_ignore_ascii_case(b"content-type") => {}
            _ => {
                // Not a header: one answer, then skip to the next `Content-Length`, which may
                // start part way along this line (after a body cut short).
                if out.is_empty() {
                    let text = String::from_utf8_lossy(l);
                    out.push(parse_error(format!(
                        "malformed header `{}`",
                        shorten(&text)
                    )));
                }
                size = None;
                if let Some(k) = find_header(&line[1..]) {
                    r.unread(&line[k + 1..]);
                } else if line.last() != Some(&b'\n') && line.len() > HEADER.len() {
                    // A piece of a long line: the header may straddle the cut.
                    r.unread(&line[line.len() - HEADER.len()..]);
                }
            }
        }
    }
    let size = size.unwrap_or(0);
    if size > MAX_BODY {
        std::io::copy(&mut r.by_ref().take(size as u64), &mut std::io::sink())?;
        out.push(parse_error(format!(
            "a body of {size} bytes is more than collc reads ({MAX_BODY})"
        )));
        return Ok(Some(out));
    }
    let body = read_body(r, size)?;
    out.push(frame_of(&body, r));
    Ok(Some(out))
}

/// Reads a body of `size` bytes, or fewer: a body that is a JSON object ends where the object
/// closes, for what may follow it is whitespace if the length is right, and the next frame if
/// it is too long (which a client waiting for the answer would never send). The input may also
/// end first: what came is still a body to answer.
fn read_body<R: BufRead>(r: &mut Input<R>, size: usize) -> std::io::Result<Vec<u8>> {
    let mut body = Vec::new();
    let mut scan = Scan::default();
    while body.len() < size {
        let have = r.fill_buf()?;
        if have.is_empty() {
            break;
        }
        let want = have.len().min(size - body.len());
        let closed = scan.feed(&have[..want]);
        let n = closed.map_or(want, |i| i + 1);
        body.extend_from_slice(&have[..n]);
        r.consume(n);
        if closed.is_some()
            && body.len() < size
            && serde_json::from_slice::<serde::de::IgnoredAny>(&body).is_ok()
        {
            break;
        }
    }
    Ok(body)
}

/// Follows the brackets of a body that starts with `{`, outside strings, to find where the
/// object closes.
#[derive(Default)]
struct Scan {
    depth: u32,
    in_string: bool,
    escape: bool,
    /// Closed, or not an object: nothing more to find.
    done: bool,
}

impl Scan {
    /// Where in `bytes` (the body's next bytes) the object closes, if it does there.
    fn feed(&mut self, bytes: &[u8]) -> Option<usize> {
        if self.done {
            return None;
        }
        for (i, &b) in bytes.iter().enumerate() {
            if self.in_string {
                if self.escape {
                    self.escape = false;
                } else if b == b'\\' {
                    self.escape = true;
                } else if b == b'"' {
                    self.in_string = false;
                }
                continue;
            }
            if self.depth == 0 && b != b'{' && !b.is_ascii_whitespace() {
                self.done = true;
                return None;
            }
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        self.done = true;
                        return Some(i);
                    }
                }
                _ => {}
            }
        }
        None
    }
}

/// The frame a body holds; pushes back onto `r` the start of the next frame if the body
/// swallowed it.
fn frame_of<R: BufRead>(body: &[u8], r: &mut Input<R>) -> Frame {
    let err = match serde_json::from_slice::<Value>(body) {
        Ok(v) => return message(v),
        Err(e) => e,
    };
    let mut values = serde_json::Deserializer::from_slice(body).into_iter::<Value>();
    if let Some(Ok(v)) = values.next() {
        let rest = &body[values.byte_offset()..];
        if looks_like_header(rest.trim_ascii_start()) {
            eprintln!(
                "collc lsp: a Content-Length {} bytes too long; read the rest as the next message",
                rest.len()
            );
            r.unread(rest);
            return message(v);
        }
    }
    if let Some(k) = find_header(body) {
        r.unread(&body[k..]);
        return parse_error(format!(
            "parse error: the body ends at byte {k}, where a header starts: {err}"
        ));
    }
    parse_error(format!("parse error: {err}"))
}

/// A JSON value as a message, or what to answer.
fn message(value: Value) -> Frame {
    let is_request = value.get("method").is_some();
    match value.get("id") {
        Some(id) if is_request && !(id.is_string() || id.is_number()) => {
            return Frame::Bad(
                -32600,
                "invalid request: the id must be an integer or a string".into(),
                Value::Null,
            );
        }
        Some(id)
            if is_request
                && id.is_number()
                && id.as_i64().and_then(|i| i32::try_from(i).ok()).is_none() =>
        {
            return Frame::Bad(
                -32600,
                "invalid request: collc takes integer ids of at most 32 bits".into(),
                id.clone(),
            );
        }
        _ => {}
    }
    let id = match value.get("id") {
        Some(id) if id.is_string() || id.is_number() => id.clone(),
        _ => Value::Null,
    };
    match serde_json::from_value::<Message>(value) {
        Ok(m) => Frame::Message(m),
        Err(e) => Frame::Bad(-32600, format!("invalid request: {e}"), id),
    }
}

/// The header that frames every message, in lower case.
const HEADER: &[u8] = b"content-length";

/// Where a `Content-Length:` header starts in `bytes`, if one does.
fn find_header(bytes: &[u8]) -> Option<usize> {
    (0..bytes.len().saturating_sub(HEADER.len() - 1)).find(|&i| {
        bytes[i..i + HEADER.len()].eq_ignore_ascii_case(HEADER)
            && bytes[i + HEADER.len()..].trim_ascii_start().first() == Some(&b':')
    })
}

/// Whether `bytes` can be the start of a frame's headers (or all of a cut-off header name).
fn looks_like_header(bytes: &[u8]) -> bool {
    [&b"content-length"[..], b"content-type"].iter().any(|h| {
        let n = bytes.len().min(h.len());
        n > 0 && bytes[..n].eq_ignore_ascii_case(&h[..n])
    })
}

fn trim_line(line: &[u8]) -> &[u8] {
    let mut l = line;
    while let [rest @ .., b'\r' | b'\n'] = l {
        l = rest;
    }
    l
}

fn shorten(s: &str) -> String {
    let mut t: String = s.chars().take(60).collect();
    if t.len() < s.len() {
        t.push_str("...");
    }
    t
}

#[cfg(test)]
mod tests;
