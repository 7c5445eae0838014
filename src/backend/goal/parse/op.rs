//! One op line of the reader: `[label:] send|recv|calc ...` with its fields, as `txt2bin`
//! reads them, into the open rank block.

use super::{Expected, Parser, RawOp};
use crate::backend::goal::{ANY_SOURCE, ANY_TAG, OpKind};
use crate::diag::{Code, Diagnostic, Span};

impl Parser<'_> {
    /// `[0-9]+` after optional blanks, checked against `max`; None after reporting.
    pub(super) fn field(
        &mut self,
        what: &str,
        max: u64,
        expected: Expected,
        help: &str,
    ) -> Option<u64> {
        self.skip_ws();
        match self.int() {
            Some((v, at)) => {
                let x = self.num(v, at, what, max);
                self.skip_ws();
                Some(x)
            }
            None => {
                self.fail(expected, help);
                None
            }
        }
    }

    pub(super) fn op(&mut self, kw: &str, label: Option<(String, Span)>, start: usize) {
        let (mut peer, mut tag, mut cpu, mut nic) = (0u64, 0u64, 0u64, 0u64);
        let Some(size) = self.field(
            if kw == "calc" { "calc time" } else { "size" },
            u64::MAX,
            if kw == "calc" {
                "an integer (the calc's time)"
            } else {
                "an integer (the size)"
            },
            if kw == "calc" {
                "write `calc TIME`"
            } else {
                "write the size in bytes, e.g. `8b`"
            },
        ) else {
            return;
        };
        // What may follow at the end of the op, for the message when the line goes on.
        let mut expect: Expected;
        if kw == "calc" {
            // s_3, s_7, s_8, s_9
            expect = "`cpu` or the end of the line";
            if self.lit("cpu") {
                let Some(c) = self.field("cpu", 255, "an integer (the cpu)", "write `cpu N`")
                else {
                    return;
                };
                cpu = c;
                expect = "the end of the line";
            } else if self.s[self.pos..].starts_with(b"nic") {
                return self.fail(
                    expect,
                    "a calc runs on a cpu and has no `nic`; remove `nic N`",
                );
            }
        } else {
            // s_2, s_10 .. s_19
            let is_send = kw == "send";
            if !self.lit("b") {
                return self.fail("`b`", "sizes are written in bytes with a `b`, e.g. `8b`");
            }
            self.skip_ws();
            if !self.lit(if is_send { "to" } else { "from" }) {
                return if is_send {
                    self.fail("`to`", "a send goes `to` a rank: `send 8b to 1`")
                } else {
                    self.fail("`from`", "a recv comes `from` a rank: `recv 8b from 0`")
                };
            }
            self.skip_ws();
            if self.s[self.pos..].starts_with(b"-1") {
                if is_send {
                    return self.fail(
                        "an integer (the destination rank)",
                        "a send needs a destination; only a recv may use -1 (any source)",
                    );
                }
                self.pos += 2;
                self.skip_ws();
                peer = u64::from(ANY_SOURCE);
            } else {
                let Some(p) = self.field(
                    "peer rank",
                    u64::from(u32::MAX) - 1,
                    "an integer (the peer's rank)",
                    "write the peer's rank number",
                ) else {
                    return;
                };
                peer = p;
            }
            expect = "`tag`, `cpu`, `nic` or the end of the line";
            if self.lit("tag") {
                self.skip_ws();
                if self.lit("-1") {
                    self.skip_ws();
                    tag = u64::from(ANY_TAG);
                } else {
                    let Some(t) = self.field(
                        "tag",
                        u64::from(ANY_TAG) - 1,
                        "an integer (the tag)",
                        "write `tag N`, or `tag -1` for any tag",
                    ) else {
                        return;
                    };
                    tag = t;
                }
                expect = "`cpu`, `nic` or the end of the line";
            }
            if self.lit("cpu") {
                let Some(c) = self.field("cpu", 255, "an integer (the cpu)", "write `cpu N`")
                else {
                    return;
                };
                cpu = c;
                expect = "`nic` or the end of the line";
            }
            if self.lit("nic") {
                let Some(n) = self.field("nic", 255, "an integer (the nic)", "write `nic N`")
                else {
                    return;
                };
                nic = n;
                expect = "the end of the line";
            }
        }
        let end = self.pos;
        if !self.nl() {
            return self.fail(
                expect,
                "an op ends at the end of its line; options come in the order `tag`, `cpu`, `nic`",
            );
        }
        let span = self.span(start, end);
        let Some(b) = self.block() else {
            return self.outside(span);
        };
        let kind = match kw {
            "send" => OpKind::Send {
                size,
                to: peer as u32,
                tag: tag as u32,
            },
            "recv" => OpKind::Recv {
                size,
                from: peer as u32,
                tag: tag as u32,
            },
            _ => OpKind::Calc { time: size },
        };
        let block = &mut self.blocks[b];
        let id = block.ops.len() as u32;
        if let Some((name, at)) = &label {
            if let Some((_, first)) = block.labels.get(name) {
                let first = *first;
                self.semantic.push(
                    Diagnostic::error(
                        Code::GoalInvalid,
                        *at,
                        format!("label `{name}` is defined twice in rank {}", block.number),
                    )
                    .label("defined again here")
                    .secondary(first, "first defined here")
                    .help(
                        "give every op of a rank its own label (txt2bin keeps the first silently)",
                    ),
                );
            } else {
                block.labels.insert(name.clone(), (id, *at));
            }
        }
        block.ops.push(RawOp {
            label,
            kind,
            cpu: cpu as u8,
            nic: nic as u8,
            span,
        });
    }
}
