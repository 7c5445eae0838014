//! Reading an input file whole, in bounded memory (issue 41): a regular file larger than the
//! limit (`--max-input-bytes`, default [`MAX_INPUT_BYTES`]) is refused before
//! a byte is read, and anything else (a pipe, a device such as `/dev/zero`) is read a block at
//! a time and refused as soon as it passes the limit (E0060), holds a NUL byte (E0059: binary,
//! not text) or a byte sequence that is not UTF-8 (E0002), so a hostile input costs at most the
//! limit, and binary input one block.

use crate::diag::{Code, Diagnostic, SourceMap, Span};
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes read at a time.
const BLOCK: usize = 1 << 16;

/// The most bytes of a file read whole unless `--max-input-bytes` says otherwise (128 MiB):
/// the text, its line table (4 bytes a line: 512 MiB for 128 MiB of blank lines) and what a
/// reader makes of it stay within a few gigabytes. `collc sim FILE.goal` streams what it can
/// ([`crate::sim::read`]) and is not bound by it.
pub(crate) const MAX_INPUT_BYTES: u64 = 1 << 27;

/// The limit of this run: the command's `--max-input-bytes` ([`set_limit`]).
static LIMIT: AtomicU64 = AtomicU64::new(MAX_INPUT_BYTES);

/// Sets the limit for the files this run reads whole (from the command line).
pub(crate) fn set_limit(bytes: u64) {
    LIMIT.store(bytes, Ordering::Relaxed);
}

/// The limit [`set_limit`] set, else [`MAX_INPUT_BYTES`].
pub(crate) fn limit() -> u64 {
    LIMIT.load(Ordering::Relaxed)
}

/// The bytes of `path`, which are UTF-8 text without NUL bytes and at most `limit` of them;
/// else the diagnostic (E0029 when the file cannot be read).
pub(crate) fn read(
    path: &Path,
    files: &mut SourceMap,
    limit: u64,
) -> Result<Vec<u8>, Box<Diagnostic>> {
    let unreadable = |files: &mut SourceMap, e: std::io::Error| {
        let f = files.add(path.display().to_string(), String::new());
        Box::new(
            Diagnostic::error(
                Code::Io,
                Span::new(f, 0, 0),
                format!("cannot read `{}`: {e}", path.display()),
            )
            .label("unreadable")
            .help("check the path and permissions"),
        )
    };
    let mut file = std::fs::File::open(path).map_err(|e| unreadable(files, e))?;
    let size = file
        .metadata()
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len());
    if let Some(n) = size.filter(|n| *n > limit) {
        return Err(too_large(files, path, Some(n), limit));
    }
    let mut bytes = Vec::with_capacity(size.unwrap_or(0).min(limit) as usize);
    let mut block = vec![0u8; BLOCK];
    // The bytes known to be UTF-8 so far (a sequence cut by a block end is checked with the
    // next block).
    let mut valid = 0;
    loop {
        let n = match file.read(&mut block) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(unreadable(files, e)),
        };
        let new = &block[..n];
        if let Some(i) = memchr::memchr(0, new) {
            bytes.extend_from_slice(&new[..=i]);
            return Err(binary(files, path, &bytes));
        }
        if (bytes.len() + n) as u64 > limit {
            return Err(too_large(files, path, None, limit));
        }
        bytes.extend_from_slice(new);
        match std::str::from_utf8(&bytes[valid..]) {
            Ok(_) => valid = bytes.len(),
            Err(e) if e.error_len().is_none() => valid += e.valid_up_to(),
            Err(e) => {
                let at = valid + e.valid_up_to();
                bytes.truncate(at + e.error_len().unwrap_or(1));
                let err = std::str::from_utf8(&bytes).expect_err("invalid at `at`");
                return Err(Box::new(not_utf8(files, path, &bytes, err)));
            }
        }
    }
    Ok(bytes)
}

/// E0002 for text that is not UTF-8 (`bytes` up to the first invalid sequence at least).
pub(crate) fn not_utf8(
    files: &mut SourceMap,
    path: &Path,
    bytes: &[u8],
    e: std::str::Utf8Error,
) -> Diagnostic {
    let valid = e.valid_up_to();
    let text = String::from_utf8_lossy(bytes).into_owned();
    let f = files.add(path.display().to_string(), text);
    Diagnostic::error(
        Code::InvalidToken,
        Span::new(f, valid, valid + 1),
        "the file is not valid UTF-8",
    )
    .label("invalid byte")
    .help("save the file as UTF-8")
}

/// E0059: a NUL byte, the last of `bytes`.
fn binary(files: &mut SourceMap, path: &Path, bytes: &[u8]) -> Box<Diagnostic> {
    let text = String::from_utf8_lossy(bytes).into_owned();
    // Lossy replacement may lengthen what comes before; the NUL stays the last character.
    let at = text.len().saturating_sub(1);
    let f = files.add(path.display().to_string(), text);
    Box::new(
        Diagnostic::error(
            Code::BinaryInput,
            Span::new(f, at, at + 1),
            format!(
                "`{}` is binary, not text: it holds a NUL byte",
                path.display()
            ),
        )
        .label("NUL byte")
        .help("collc reads text files: .coll, GOAL, IR or MSCCL XML; check that the path names the file meant"),
    )
}

/// E0060: the file is larger than `limit` bytes (`size` when known before reading).
fn too_large(files: &mut SourceMap, path: &Path, size: Option<u64>, limit: u64) -> Box<Diagnostic> {
    let f = files.add(path.display().to_string(), String::new());
    let what = match size {
        Some(n) => format!("{n} bytes"),
        None => format!("more than {limit} bytes"),
    };
    Box::new(
        Diagnostic::error(
            Code::InputTooLarge,
            Span::new(f, 0, 0),
            format!(
                "`{}` is {what}, over the limit of {limit} bytes on a file read whole",
                path.display()
            ),
        )
        .label("too large")
        .help(format!(
            "if the file is meant, raise the limit with `--max-input-bytes {}`",
            size.unwrap_or(limit.saturating_mul(2))
                .max(limit.saturating_add(1))
        )),
    )
}

/// The refusals of [`read`] for text given in memory (the Python package's `text=`): more
/// than `limit` bytes (E0060) or a NUL byte (E0059).
pub(crate) fn check_bytes(
    name: &Path,
    bytes: &[u8],
    files: &mut SourceMap,
    limit: u64,
) -> Result<(), Box<Diagnostic>> {
    if let Some(i) = memchr::memchr(0, bytes) {
        return Err(binary(files, name, &bytes[..=i]));
    }
    if bytes.len() as u64 > limit {
        return Err(too_large(files, name, Some(bytes.len() as u64), limit));
    }
    Ok(())
}
