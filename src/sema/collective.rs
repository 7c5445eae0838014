//! The `collective` declaration: kind, participants resolved to ranks, element count, dtype,
//! reduction op and root. Rank r is the r-th participant: declaration order for `all`, list order
//! otherwise. `size` is the byte size of the collective's buffer (each rank's vector for
//! allreduce, broadcast and reduce; the gathered output for allgather; the input for
//! reduce-scatter; each rank's send buffer of N blocks for all-to-all, as nccl-tests'
//! `alltoall_perf` counts it); `count` gives the same in elements.

use super::elab::Elab;
use super::eval::to_u64;
use super::model::{Collective, CollectiveKind, Dtype, NodeId, NodeKind, ReduceOp, Topology};
use super::units::{Dim, Quantity};
use super::value::Value;
use crate::diag::{Code, Diagnostic, Span};
use crate::syntax::ast::{ExprKind, Ident, Prop};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::Signed;

/// Properties of a `collective` block.
/// The largest collective collc accepts, in bytes (256 TiB): sizes times picoseconds per byte
/// then stay within the simulators' 64-bit counters.
pub const MAX_BYTES: u64 = 1 << 48;

pub const PROPS: &[&str] = &["participants", "size", "count", "dtype", "op", "root"];

impl Elab<'_> {
    pub(crate) fn collective(
        &mut self,
        kind: &Ident,
        props: &[Prop],
        span: Span,
        topo: &Topology,
    ) -> Option<Collective> {
        let kinds: Vec<&str> = CollectiveKind::ALL.iter().map(|k| k.0).collect();
        let ckind = match CollectiveKind::ALL.iter().find(|k| k.0 == kind.name) {
            Some(k) => Some(k.1),
            None => {
                self.bad_word(&kind.name, kind.span, &kinds, "collective");
                None
            }
        };
        let what = format!("collective `{}`", kind.name);
        // Diagnostics about the whole declaration point at `collective <kind>`.
        let head = super::head(span, kind.span);
        let p = self.props(props, PROPS, &what);
        let ranks = match p.get("participants") {
            Some(pp) => self.participants(pp, topo),
            None => Some(topo.compute_nodes().collect::<Vec<_>>()),
        };
        let dtype = match p.get("dtype") {
            Some(d) => self.word(d, Dtype::ALL, "dtype"),
            None => Some(Dtype::F32),
        };
        let op = match p.get("op") {
            Some(o) => self.word(o, ReduceOp::ALL, "reduction op"),
            None => Some(ReduceOp::Sum),
        };
        let ckind = ckind?;
        if let Some(o) = p.get("op").filter(|_| !ckind.reduces()) {
            self.err(
                Diagnostic::error(
                    Code::BadProperty,
                    o.key.span,
                    format!("{} does not reduce, so `op` has no meaning", ckind.name()),
                )
                .label("not used by this collective")
                .help("remove `op`; only allreduce, reduce_scatter and reduce combine values"),
            );
            return None;
        }
        let ranks = ranks?;
        if ranks.is_empty() && (self.topology_incomplete || !self.poisoned.is_empty()) {
            return None;
        }
        if ranks.is_empty() {
            self.err(
                Diagnostic::error(
                    Code::NotComputeNode,
                    head,
                    "the collective has no participants",
                )
                .label("no compute nodes take part")
                .help("declare compute nodes with `compute name[n];` or list participants"),
            );
            return None;
        }
        let dtype = dtype?;
        let count = self.count(&p, ckind, dtype, ranks.len(), head, &what)?;
        let root = self.root(&p, ckind, &ranks, topo, head)?;
        Some(Collective {
            kind: ckind,
            ranks,
            count,
            dtype,
            op: op?,
            root,
            span,
        })
    }

    fn participants(&mut self, p: &Prop, topo: &Topology) -> Option<Vec<NodeId>> {
        if let ExprKind::Name(n) = &p.value.kind {
            if n == "all" && self.lookup_var("all").is_none() && !self.arrays.contains_key("all") {
                return Some(topo.compute_nodes().collect());
            }
        }
        let items: Vec<&crate::syntax::ast::Expr> = match &p.value.kind {
            ExprKind::List(items) => items.iter().collect(),
            _ => vec![&p.value],
        };
        let mut out: Vec<NodeId> = Vec::new();
        let mut first_at: std::collections::HashMap<NodeId, Span> =
            std::collections::HashMap::new();
        let mut ok = true;
        for it in items {
            match self.eval(it) {
                Some(Value::Nodes(ids)) => {
                    for id in ids {
                        let node = &topo.nodes[id];
                        if node.kind != NodeKind::Compute {
                            self.err(
                                Diagnostic::error(Code::NotComputeNode, it.span, format!("`{}` is a switch, not a compute node", node.name))
                                    .label("switches cannot be participants")
                                    .secondary(node.span, "declared as a switch here")
                                    .help("list only compute nodes; switches take part through in-network schedules such as `canary`"),
                            );
                            ok = false;
                            continue;
                        }
                        if let Some(prev) = first_at.get(&id) {
                            self.err(
                                Diagnostic::error(
                                    Code::DuplicateParticipant,
                                    it.span,
                                    format!("`{}` is listed twice", node.name),
                                )
                                .label("listed again")
                                .secondary(*prev, "first listed here")
                                .help("each compute node takes part once; remove the repeat"),
                            );
                            ok = false;
                            continue;
                        }
                        first_at.insert(id, it.span);
                        out.push(id);
                    }
                }
                Some(other) => {
                    self.err(
                        Diagnostic::error(Code::NotComputeNode, it.span, format!("a participant must be a compute node, found {}", other.type_name()))
                            .label("not a node")
                            .help("write `participants: all;` or a list of compute nodes such as `[gpu[0], gpu[1]]`"),
                    );
                    ok = false;
                }
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    fn count(
        &mut self,
        p: &std::collections::BTreeMap<&str, &Prop>,
        kind: CollectiveKind,
        dtype: Dtype,
        n: usize,
        span: Span,
        what: &str,
    ) -> Option<u64> {
        if kind == CollectiveKind::Barrier {
            if let Some(x) = p.get("size").or(p.get("count")) {
                self.err(
                    Diagnostic::error(
                        Code::BadProperty,
                        x.key.span,
                        format!("a barrier carries no data, but `{}` is given", x.key.name),
                    )
                    .label("not used by a barrier")
                    .help(format!(
                        "remove `{}`; a barrier is a zero-byte allreduce",
                        x.key.name
                    )),
                );
                return None;
            }
        }
        let count = match (p.get("size"), p.get("count")) {
            (Some(s), Some(c)) => {
                self.err(
                    Diagnostic::error(
                        Code::BadProperty,
                        c.key.span,
                        "both `size` and `count` are given",
                    )
                    .label("second way to give the size")
                    .secondary(s.key.span, "size given here")
                    .help("give either `size` (bytes) or `count` (elements), not both"),
                );
                return None;
            }
            (Some(s), None) => {
                let bytes = self.eval_quantity(&s.value, Dim::SIZE, "the collective's size")?;
                if !bytes.is_positive() {
                    self.err(
                        Diagnostic::error(
                            Code::NonPositive,
                            s.value.span,
                            format!(
                                "the collective's size must be positive, found {}",
                                Quantity {
                                    value: bytes,
                                    dim: Dim::SIZE
                                }
                            ),
                        )
                        .label("not positive")
                        .help("give a size above zero, e.g. `size: 1 MiB;`"),
                    );
                    return None;
                }
                let per = BigRational::from_integer(BigInt::from(dtype.bytes()));
                let elems = &bytes / per;
                match to_u64(&elems) {
                    Some(c) => c,
                    None => {
                        self.err(
                            Diagnostic::error(
                                Code::SizeNotDivisible,
                                s.value.span,
                                format!("{} is not a whole number of {} elements ({} bytes each)", Quantity { value: bytes, dim: Dim::SIZE }, dtype.name(), dtype.bytes()),
                            )
                            .label("not a multiple of the element size")
                            .help(format!("use a size that is a multiple of {} B, or give `count` in elements", dtype.bytes())),
                        );
                        return None;
                    }
                }
            }
            (None, Some(c)) => {
                let v = self.eval_int(&c.value)?;
                if v <= 0 {
                    self.err(
                        Diagnostic::error(
                            Code::NonPositive,
                            c.value.span,
                            format!("element count must be positive, found {v}"),
                        )
                        .label("not positive")
                        .help("give at least one element, e.g. `count: 1024;`"),
                    );
                    return None;
                }
                v as u64
            }
            (None, None) => {
                if kind == CollectiveKind::Barrier {
                    return Some(0);
                }
                self.missing(span, "size", what, "1 MiB");
                return None;
            }
        };
        if u128::from(count) * u128::from(dtype.bytes()) > u128::from(MAX_BYTES) {
            let prop = p
                .get("size")
                .or(p.get("count"))
                .map_or(span, |x| x.value.span);
            self.err(
                Diagnostic::error(
                    Code::BadValue,
                    prop,
                    format!(
                        "{count} elements of {} B are more than the {MAX_BYTES} B (256 TiB) collc accepts",
                        dtype.bytes()
                    ),
                )
                .label("too large")
                .help("collc's simulators count bytes and picoseconds in 64 bits; give a size of at most `256 TiB`"),
            );
            return None;
        }
        if matches!(
            kind,
            CollectiveKind::Allgather | CollectiveKind::ReduceScatter | CollectiveKind::Alltoall
        ) && count % n as u64 != 0
        {
            let prop = p
                .get("size")
                .or(p.get("count"))
                .map(|x| x.value.span)
                .unwrap_or(span);
            self.err(
                Diagnostic::error(
                    Code::SizeNotDivisible,
                    prop,
                    format!(
                        "{count} elements cannot be split evenly over {n} ranks for {}",
                        kind.name()
                    ),
                )
                .label("not divisible by the rank count")
                .help({
                    let (n, below) = (n as u64, count / n as u64 * n as u64);
                    let above = below + n;
                    let b = dtype.bytes();
                    match (p.contains_key("size"), below > 0) {
                        (true, true) => format!(
                            "use a size of a multiple of {n} elements, e.g. {} B or {} B",
                            below * b,
                            above * b
                        ),
                        (true, false) => format!(
                            "use a size of a multiple of {n} elements, e.g. {} B",
                            above * b
                        ),
                        (false, true) => format!(
                            "use a count that is a multiple of {n}, e.g. {below} or {above}"
                        ),
                        (false, false) => {
                            format!("use a count that is a multiple of {n}, e.g. {above}")
                        }
                    }
                }),
            );
            return None;
        }
        Some(count)
    }

    fn root(
        &mut self,
        p: &std::collections::BTreeMap<&str, &Prop>,
        kind: CollectiveKind,
        ranks: &[NodeId],
        topo: &Topology,
        span: Span,
    ) -> Option<Option<usize>> {
        match (p.get("root"), kind.has_root()) {
            (None, false) => Some(None),
            (None, true) => {
                self.err(
                    Diagnostic::error(Code::BadRoot, span, format!("{} needs a root", kind.name()))
                        .label("no `root` given")
                        .help("add `root: <compute node>;`, e.g. `root: gpu[0];`"),
                );
                None
            }
            (Some(r), false) => {
                self.err(
                    Diagnostic::error(
                        Code::BadRoot,
                        r.key.span,
                        format!("{} has no root", kind.name()),
                    )
                    .label("not used by this collective")
                    .help("remove `root`; only broadcast and reduce have one"),
                );
                None
            }
            (Some(r), true) => {
                let v = self.eval(&r.value)?;
                let Value::Nodes(ids) = v else {
                    self.err(
                        Diagnostic::error(
                            Code::BadRoot,
                            r.value.span,
                            format!("the root must be a node, found {}", v.type_name()),
                        )
                        .label("not a node")
                        .help("name one participant, e.g. `root: gpu[0];`"),
                    );
                    return None;
                };
                if ids.len() != 1 {
                    self.err(
                        Diagnostic::error(
                            Code::BadRoot,
                            r.value.span,
                            format!(
                                "the root must be one node, but this names {} nodes",
                                ids.len()
                            ),
                        )
                        .label("several nodes")
                        .help("index the array down to one node, e.g. `gpu[0]`"),
                    );
                    return None;
                }
                match ranks.iter().position(|x| *x == ids[0]) {
                    Some(rank) => Some(Some(rank)),
                    None => {
                        self.err(
                            Diagnostic::error(
                                Code::BadRoot,
                                r.value.span,
                                format!(
                                    "the root `{}` is not a participant",
                                    topo.nodes[ids[0]].name
                                ),
                            )
                            .label("not among the participants")
                            .help("choose a root from the participants, or add it to them"),
                        );
                        None
                    }
                }
            }
        }
    }
}
