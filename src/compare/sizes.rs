//! The sizes `collc compare --sizes` sweeps, written as the language writes sizes (a number and a
//! size unit: `8B`, `1.5 MiB`, `64 MiB`; see `sema::units`): a list `8B,1MiB,64MiB`, or a range
//! `1KiB..1GiB` that doubles from the first size while it stays at most the last (as nccl-tests'
//! `-b -e -f 2`), or with another whole factor, `1KiB..1GiB*4`. nccl-tests' own way of writing
//! sizes works too: a bare number is bytes and `K`, `M`, `G`, `T` are 1024, 1024^2, ...
//! (`8..1G`, `8K..256M`). [`show`] writes a size back.

use crate::diag::Code;
use crate::sema::units::{Dim, UNIT_HELP, unit, unknown_unit_help};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{ToPrimitive, Zero};
use std::ops::Range;

/// Most sizes one sweep may have.
pub const MAX_SIZES: usize = 64;

/// The default sweep: 1 KiB to 1 GiB, doubling.
pub const DEFAULT: &str = "1KiB..1GiB";

/// What is wrong with a `--sizes` value: where (byte offsets into it), the code, the message and
/// how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizesError {
    pub at: Range<usize>,
    pub code: Code,
    pub message: String,
    pub label: String,
    pub help: String,
}

fn err(at: Range<usize>, code: Code, message: String, label: &str, help: &str) -> SizesError {
    SizesError {
        at,
        code,
        message,
        label: label.into(),
        help: help.into(),
    }
}

/// The sizes `spec` describes, in bytes, ascending and without repeats.
pub fn parse(spec: &str) -> Result<Vec<u64>, SizesError> {
    let mut sizes = match spec.find("..") {
        Some(dots) => range(spec, dots)?,
        None => {
            let mut out = Vec::new();
            let mut at = 0;
            for piece in spec.split(',') {
                out.push(size(spec, at..at + piece.len())?);
                at += piece.len() + 1;
            }
            out
        }
    };
    sizes.sort_unstable();
    sizes.dedup();
    if sizes.len() > MAX_SIZES {
        return Err(err(
            0..spec.len(),
            Code::BadValue,
            format!(
                "`{spec}` has {} sizes, more than the {MAX_SIZES} a sweep may have",
                sizes.len()
            ),
            "too many sizes",
            "use a larger factor, e.g. `1KiB..1GiB*4`, or fewer sizes",
        ));
    }
    Ok(sizes)
}

fn range(spec: &str, dots: usize) -> Result<Vec<u64>, SizesError> {
    let from = size(spec, 0..dots)?;
    let rest = dots + 2;
    let (end, factor) = match spec[rest..].find('*') {
        Some(star) => {
            let f = rest + star + 1..spec.len();
            let factor = spec[f.clone()]
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|&x| x >= 2);
            let Some(factor) = factor else {
                return Err(err(
                    f.clone(),
                    Code::BadValue,
                    format!("`{}` is not a whole factor of at least 2", &spec[f]),
                    "expected a factor such as 2 or 4",
                    "write e.g. `1KiB..1GiB*4` (the default factor is 2)",
                ));
            };
            (rest..rest + star, factor)
        }
        None => (rest..spec.len(), 2),
    };
    let to = size(spec, end.clone())?;
    if to < from {
        return Err(err(
            0..spec.len(),
            Code::BadValue,
            format!(
                "the range `{spec}` ends at {} below its start {}",
                show(to),
                show(from)
            ),
            "empty range",
            "write the smaller size first, e.g. `1KiB..1GiB`",
        ));
    }
    let mut out = Vec::new();
    let mut s = from;
    while s <= to && out.len() <= MAX_SIZES {
        out.push(s);
        match s.checked_mul(factor) {
            Some(n) => s = n,
            None => break,
        }
    }
    Ok(out)
}

/// One size at `at` in `spec`.
fn size(spec: &str, at: Range<usize>) -> Result<u64, SizesError> {
    let text = spec[at.clone()].trim();
    let lead = spec[at.clone()].len() - spec[at.clone()].trim_start().len();
    let at = at.start + lead..at.start + lead + text.len();
    let digits = text
        .find(|ch: char| !(ch.is_ascii_digit() || ch == '.'))
        .unwrap_or(text.len());
    let (num, u) = (&text[..digits], text[digits..].trim());
    let Some(value) = decimal(num) else {
        return Err(err(
            at,
            Code::Syntax,
            format!("`{text}` is not a size"),
            "expected a number and a size unit",
            "write e.g. `1KiB..1GiB` or `8B,1MiB,64MiB`",
        ));
    };
    // nccl-tests' own syntax (`-b 8 -e 1G`): a bare number is bytes, and a single K, M, G or T
    // (either case) a binary multiple.
    let nccl = match u {
        "" => Some(0),
        "K" | "k" => Some(1),
        "M" | "m" => Some(2),
        "G" | "g" => Some(3),
        "T" | "t" => Some(4),
        _ => None,
    };
    let Some((factor, dim)) = nccl
        .map(|p| {
            let f = BigRational::from_integer(num_traits::pow(BigInt::from(1024), p));
            (f, Dim::SIZE)
        })
        .or_else(|| unit(u))
    else {
        return Err(err(
            at,
            Code::UnknownUnit,
            format!("unknown unit `{u}`"),
            "not a unit",
            &unknown_unit_help(num, u),
        ));
    };
    if dim != Dim::SIZE {
        return Err(err(
            at,
            Code::DimensionMismatch,
            format!("`{text}` is a {}, not a size", dim.name()),
            "expected a size",
            &format!("use a size unit ({UNIT_HELP})"),
        ));
    }
    let bytes = value * factor;
    let whole = bytes.is_integer() && !bytes.is_zero();
    match bytes.to_integer().to_u64().filter(|_| whole) {
        Some(b) => Ok(b),
        None => Err(err(
            at,
            if bytes.is_zero() {
                Code::NonPositive
            } else {
                Code::BadValue
            },
            format!("`{text}` is not a positive whole number of bytes"),
            "not a whole number of bytes",
            "use a size of at least 1 B that is a whole number of bytes",
        )),
    }
}

/// An unsigned decimal (`64`, `1.5`) as an exact rational.
fn decimal(s: &str) -> Option<BigRational> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if int.is_empty() || s.matches('.').count() > 1 {
        return None;
    }
    let digits: BigInt = format!("{int}{frac}").parse().ok()?;
    let scale = num_traits::pow(BigInt::from(10), frac.len());
    Some(BigRational::new(digits, scale))
}

/// `bytes` in the largest binary unit it is a whole multiple of (`8 B`, `1 KiB`, `64 MiB`),
/// else the largest decimal one (`1 MB`), else bytes.
pub fn show(bytes: u64) -> String {
    const UNITS: [(u64, &str); 8] = [
        (1 << 40, "TiB"),
        (1 << 30, "GiB"),
        (1 << 20, "MiB"),
        (1 << 10, "KiB"),
        (1_000_000_000_000, "TB"),
        (1_000_000_000, "GB"),
        (1_000_000, "MB"),
        (1_000, "KB"),
    ];
    UNITS
        .iter()
        .find(|(f, _)| bytes >= *f && bytes % f == 0)
        .map_or_else(
            || format!("{bytes} B"),
            |(f, u)| format!("{} {u}", bytes / f),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_lists_and_units() {
        let s = parse("1KiB..1GiB").unwrap();
        assert_eq!(s.len(), 21);
        assert_eq!((s[0], s[20]), (1024, 1 << 30));
        assert_eq!(
            parse("1KiB..1MiB*4").unwrap(),
            [1024, 4096, 16384, 65536, 262144, 1 << 20]
        );
        assert_eq!(parse("1000B..5KB").unwrap(), [1000, 2000, 4000]);
        assert_eq!(parse("64MiB, 8B,1.5 KiB,8B").unwrap(), [8, 1536, 64 << 20]);
        assert_eq!(show(8), "8 B");
        assert_eq!(show(1536), "1536 B");
        assert_eq!(show(64 << 20), "64 MiB");
        assert_eq!(show(2_000_000), "2 MB");
    }

    #[test]
    fn nccl_tests_sizes() {
        let s = parse("8K..256M").unwrap();
        assert_eq!(
            (s[0], *s.last().unwrap(), s.len()),
            (8 << 10, 256 << 20, 16)
        );
        assert_eq!(parse("8, 1g,2T").unwrap(), [8, 1 << 30, 2 << 40]);
        assert_eq!(parse("1.5K").unwrap(), [1536]);
        assert_eq!(parse("1.5").unwrap_err().code, Code::BadValue);
    }

    #[test]
    fn errors_point_at_the_bad_piece() {
        let e = parse("1KiB..7XB").unwrap_err();
        assert_eq!((e.code, e.at.clone()), (Code::UnknownUnit, 6..9));
        let e = parse("8B, 64X").unwrap_err();
        assert_eq!((e.code, e.at.clone()), (Code::UnknownUnit, 4..7));
        assert_eq!(parse("1 GB/s").unwrap_err().code, Code::DimensionMismatch);
        assert_eq!(parse("1GiB..1KiB").unwrap_err().code, Code::BadValue);
        assert_eq!(parse("1KiB..1GiB*1").unwrap_err().at, 11..12);
        assert_eq!(parse("1b").unwrap_err().code, Code::BadValue);
        assert_eq!(parse("0B").unwrap_err().code, Code::NonPositive);
        assert_eq!(parse("").unwrap_err().code, Code::Syntax);
        assert_eq!(parse("1B..1TiB*1").unwrap_err().code, Code::BadValue);
        assert!(parse("1B..8EiB").is_err());
        let many: Vec<String> = (1..=65).map(|i| format!("{i}B")).collect();
        assert_eq!(parse(&many.join(",")).unwrap_err().code, Code::BadValue);
    }
}
