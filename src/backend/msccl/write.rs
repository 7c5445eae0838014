//! Writes an [`Algo`] as the text msccl-executor-nccl's hand-written reader accepts
//! (msccl-xml.md section 1.3, lexical restrictions): no `<?xml?>` prolog, `<algo>` first, one
//! start tag per line with its attributes separated by single spaces, values in double quotes,
//! indentation by spaces (never tabs), every attribute present (all ten on every step, `nop`
//! included). The layout is msccl-tools' (two spaces per level), so files diff cleanly against
//! theirs. Output is a pure function of the [`Algo`].

use super::{Algo, Step};
use std::fmt::Write;

/// The name as an attribute value: at most 63 characters (the legacy runtime's limit), without
/// the characters the reader cannot take inside a value (`"`, `<`, `>`, `&`, newlines, tabs).
pub fn clean_name(name: &str) -> String {
    name.chars()
        .map(|c| match c {
            '"' | '<' | '>' | '&' | '\n' | '\r' | '\t' => '_',
            c => c,
        })
        .take(63)
        .collect()
}

fn step(out: &mut String, s: usize, st: &Step) {
    let _ = writeln!(
        out,
        "      <step s=\"{s}\" type=\"{}\" srcbuf=\"{}\" srcoff=\"{}\" dstbuf=\"{}\" dstoff=\"{}\" cnt=\"{}\" depid=\"{}\" deps=\"{}\" hasdep=\"{}\"/>",
        st.ty.name(),
        st.src.name(),
        st.srcoff,
        st.dst.name(),
        st.dstoff,
        st.cnt,
        st.depid,
        st.deps,
        u8::from(st.hasdep)
    );
}

/// The XML text of `a`.
pub fn write(a: &Algo) -> String {
    let steps: usize = a
        .gpus
        .iter()
        .flat_map(|g| &g.tbs)
        .map(|t| t.steps.len())
        .sum();
    let mut out = String::with_capacity(256 + steps * 150);
    let _ = writeln!(
        out,
        "<algo name=\"{}\" proto=\"{}\" nchannels=\"{}\" nchunksperloop=\"{}\" ngpus=\"{}\" coll=\"{}\" inplace=\"{}\" outofplace=\"{}\" minBytes=\"{}\" maxBytes=\"{}\">",
        clean_name(&a.name),
        a.proto.name(),
        a.nchannels,
        a.nchunksperloop,
        a.ngpus,
        a.coll,
        u8::from(a.inplace),
        u8::from(a.outofplace),
        a.min_bytes,
        a.max_bytes
    );
    for g in &a.gpus {
        let _ = writeln!(
            out,
            "  <gpu id=\"{}\" i_chunks=\"{}\" o_chunks=\"{}\" s_chunks=\"{}\">",
            g.id, g.i_chunks, g.o_chunks, g.s_chunks
        );
        for (t, tb) in g.tbs.iter().enumerate() {
            let _ = writeln!(
                out,
                "    <tb id=\"{t}\" send=\"{}\" recv=\"{}\" chan=\"{}\">",
                tb.send, tb.recv, tb.chan
            );
            for (s, st) in tb.steps.iter().enumerate() {
                step(&mut out, s, st);
            }
            out.push_str("    </tb>\n");
        }
        out.push_str("  </gpu>\n");
    }
    out.push_str("</algo>\n");
    out
}
