//! The words for a [`Chunking`]: the lines the report and hover print, and GB/s figures.

use super::Chunking;
use crate::net::FlowParams;
use crate::sema::model::Collective;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::Signed;

/// `r` bytes per second in GB/s with two decimals, without the exact value.
pub fn gbs_short(r: &BigRational) -> String {
    let g = (r / BigRational::from_integer(10_000_000.into())).round();
    let hundredths = g.to_integer();
    let whole = &hundredths / BigInt::from(100);
    let frac = (&hundredths % BigInt::from(100)).abs();
    format!("{whole}.{frac:02} GB/s")
}

impl Chunking {
    /// What `chunks: auto` chose, as the report, hover and `collc sim` say it.
    pub fn auto_line(&self) -> String {
        format!(
            "chunks: auto chose {} (the fewest within 1% of the best of 1..={} chunks)",
            self.chunks, self.max
        )
    }

    /// Lines saying how many chunks `c` runs with and what the model says it reaches, for the
    /// report and hover; `depth` is the deepest tree's, `params` the file's flow parameters.
    pub fn describe(&self, c: &Collective, depth: u64, params: &FlowParams) -> Vec<String> {
        let bytes = c.bytes();
        let bw = |s: &BigRational| gbs_short(&Chunking::algbw(bytes, s));
        let how = if self.auto {
            self.auto_line()
        } else {
            format!(
                "chunks: {} (fixed; `chunks: auto` would choose {}, reaching {})",
                self.chunks,
                self.auto_chunks,
                bw(&self.auto_seconds)
            )
        };
        vec![
            format!("pipelining for this {} of {bytes} B: {how}", c.kind.name()),
            format!(
                "  deepest tree {depth} edges; a tree edge costs its route's latency plus {} ns ({})",
                crate::net::fmt_ns(&params.overhead),
                match &params.declared {
                    Some(n) => format!("model `{n}`"),
                    None => "the default overhead: no `flow` model declared".into(),
                }
            ),
            format!(
                "  achievable algbw with {} chunk{}: {} ({:.1}% of the forest's {})",
                self.chunks,
                if self.chunks == 1 { "" } else { "s" },
                bw(&self.seconds),
                100.0 * self.efficiency(&self.seconds),
                bw(&self.optimum)
            ),
        ]
        .into_iter()
        .chain((self.program != self.chunks).then(|| self.program_line(bytes)))
        .collect()
    }

    /// What a lowered program runs when collc's program limits hold it to fewer chunks than
    /// the model's choice.
    pub fn program_line(&self, bytes: u64) -> String {
        format!(
            "  a lowered program (`--emit ir`, the targets) holds at most {} chunk{} within collc's limits on a forest program's slots and ops: {} ({:.1}%)",
            self.program,
            if self.program == 1 { "" } else { "s" },
            gbs_short(&Chunking::algbw(bytes, &self.program_seconds)),
            100.0 * self.efficiency(&self.program_seconds)
        )
    }
}
