//! Unit words and their scales: decimal and binary size prefixes, time units, their quotients
//! (bandwidths, per-byte times), and the cached lookup [`unit`].

use super::Dim;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::One;

pub(super) fn pow10(e: u32) -> BigRational {
    BigRational::from_integer(num_traits::pow(BigInt::from(10), e as usize))
}

pub(super) fn pow2(e: u32) -> BigRational {
    BigRational::from_integer(num_traits::pow(BigInt::from(2), e as usize))
}

fn size_unit(s: &str) -> Option<BigRational> {
    Some(match s {
        "B" => BigRational::one(),
        "KB" | "kB" => pow10(3),
        "MB" => pow10(6),
        "GB" => pow10(9),
        "TB" => pow10(12),
        "KiB" => pow2(10),
        "MiB" => pow2(20),
        "GiB" => pow2(30),
        "TiB" => pow2(40),
        "b" | "bit" => BigRational::new(1.into(), 8.into()),
        "Kb" | "kb" => pow10(3) / BigRational::from_integer(8.into()),
        "Mb" => pow10(6) / BigRational::from_integer(8.into()),
        "Gb" => pow10(9) / BigRational::from_integer(8.into()),
        "Tb" => pow10(12) / BigRational::from_integer(8.into()),
        _ => return None,
    })
}

fn time_unit(s: &str) -> Option<BigRational> {
    let one = BigRational::one();
    Some(match s {
        "s" => one,
        "ms" => one / pow10(3),
        "us" | "µs" => one / pow10(6),
        "ns" => one / pow10(9),
        "ps" => one / pow10(12),
        _ => return None,
    })
}

thread_local! {
    static UNIT_CACHE: std::cell::RefCell<std::collections::HashMap<String, (BigRational, Dim)>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// Looks a unit up: its factor to base units and its dimension. Memoised, since generated
/// topologies write the same few units hundreds of thousands of times; only units that exist
/// are kept (a finite set), so a long-lived process that sees typos does not grow with them.
pub fn unit(s: &str) -> Option<(BigRational, Dim)> {
    if let Some(hit) = UNIT_CACHE.with(|c| c.borrow().get(s).cloned()) {
        return Some(hit);
    }
    let v = unit_uncached(s)?;
    UNIT_CACHE.with(|c| c.borrow_mut().insert(s.to_string(), v.clone()));
    Some(v)
}

fn unit_uncached(s: &str) -> Option<(BigRational, Dim)> {
    if let Some(f) = size_unit(s) {
        return Some((f, Dim::SIZE));
    }
    if let Some(f) = time_unit(s) {
        return Some((f, Dim::TIME));
    }
    // Bit rates: bps, Kbps, Mbps, Gbps, Tbps.
    if let Some(prefix) = s.strip_suffix("bps") {
        let f = match prefix {
            "" => BigRational::one(),
            "K" | "k" => pow10(3),
            "M" => pow10(6),
            "G" => pow10(9),
            "T" => pow10(12),
            _ => return None,
        };
        return Some((f / BigRational::from_integer(8.into()), Dim::BANDWIDTH));
    }
    let (num, den) = s.split_once('/')?;
    if let (Some(a), Some(b)) = (size_unit(num), time_unit(den)) {
        return Some((a / b, Dim::BANDWIDTH));
    }
    if let (Some(a), Some(b)) = (time_unit(num), size_unit(den)) {
        return Some((a / b, Dim::INV_BANDWIDTH));
    }
    None
}
