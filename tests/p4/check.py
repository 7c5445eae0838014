"""Reads a P4 target directory back with the consumers' own libraries.

- The P4Info parses as p4.config.v1.P4Info (the `p4runtime` package from PyPI), and every
  switch's write request as p4.v1.WriteRequest; each table entry names a table of the P4Info,
  its match fields and action parameters exist and their canonical byte strings fit their
  widths, its action is one of the table's, and replicas name ports that fit 9 bits.
- A frame the host program sends (given in hex with the block it carries) parses with a scapy
  layer built from the header the P4 program declares; its fields are what the plan says.

usage: check.py DIR FRAME_HEX BLOCK RANK
"""

import glob
import os
import re
import sys

os.environ.setdefault("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "python")

from google.protobuf import text_format  # noqa: E402
from p4.config.v1 import p4info_pb2  # noqa: E402
from p4.v1 import p4runtime_pb2  # noqa: E402
from scapy.all import BitField, Ether, Packet, bind_layers  # noqa: E402


def fits(value: bytes, bits: int, what: str) -> None:
    assert value, f"{what}: empty byte string"
    assert len(value) == 1 or value[0] != 0, f"{what}: {value!r} is not canonical"
    assert int.from_bytes(value, "big").bit_length() <= bits, f"{what}: {value!r} over {bits} bits"


def check_requests(d: str) -> int:
    [info_path] = glob.glob(os.path.join(d, "*.p4info.txtpb"))
    info = text_format.Parse(open(info_path).read(), p4info_pb2.P4Info())
    tables = {t.preamble.id: t for t in info.tables}
    actions = {a.preamble.id: a for a in info.actions}
    n = 0
    for path in sorted(glob.glob(os.path.join(d, "switches", "*.p4runtime.txtpb"))):
        req = text_format.Parse(open(path).read(), p4runtime_pb2.WriteRequest())
        for u in req.updates:
            n += 1
            e = u.entity
            kind = e.WhichOneof("entity")
            if kind == "table_entry":
                te = e.table_entry
                t = tables[te.table_id]
                fields = {f.id: f for f in t.match_fields}
                if not te.is_default_action:
                    assert len(te.match) == len(fields), f"{path}: {t.preamble.name}"
                for m in te.match:
                    fits(m.exact.value, fields[m.field_id].bitwidth, f"{path}: {t.preamble.name}")
                aid = te.action.action.action_id
                assert aid in [r.id for r in t.action_refs], f"{path}: action {aid}"
                params = {p.id: p for p in actions[aid].params}
                assert len(te.action.action.params) == len(params)
                for p in te.action.action.params:
                    fits(p.value, params[p.param_id].bitwidth, f"{path}: {actions[aid].preamble.name}")
            elif kind == "packet_replication_engine_entry":
                pre = e.packet_replication_engine_entry
                g = pre.multicast_group_entry if pre.HasField("multicast_group_entry") else pre.clone_session_entry
                assert len(g.replicas) > 0, path
                for r in g.replicas:
                    fits(r.port, 9, f"{path}: replica")
            else:
                raise AssertionError(f"{path}: unexpected entity {kind}")
    assert n > 0
    return n


def canary_layer(d: str):
    """A scapy layer with the fields of the P4 program's `header canary_t`, in order."""
    [prog] = [p for p in glob.glob(os.path.join(d, "*.p4"))]
    body = re.search(r"header canary_t \{(.*?)\}", open(prog).read(), re.S).group(1)
    fields = [(m.group(2), int(m.group(1))) for m in re.finditer(r"bit<(\d+)> (\w+);", body)]
    assert sum(b for _, b in fields) == 152, fields

    class Canary(Packet):
        name = "Canary"
        fields_desc = [BitField(n, 0, b) for n, b in fields]

    bind_layers(Ether, Canary, type=0x88B5)
    return Canary


def plan(d: str) -> dict:
    p = {"hosts": []}
    for line in open(os.path.join(d, "host", "plan.txt")):
        w = line.split()
        if not w or w[0].startswith("#"):
            continue
        if w[0] == "host":
            p["hosts"].append((int(w[2]), int(w[3])))
        else:
            p[w[0]] = w[1:]
    return p


def check_frame(d: str, hexframe: str, block: int, rank: int) -> None:
    Canary = canary_layer(d)
    p = plan(d)
    lanes = int(p["lanes"][0])
    raw = bytes.fromhex(hexframe)
    assert len(raw) == 14 + 19 + 4 * lanes, len(raw)
    f = Ether(raw)
    c = f[Canary]
    hosts = len(p["hosts"])
    assert (c.counter, c.hosts, c.bypass, c.multicast, c.kind, c.children) == (1, hosts, 0, 0, 0, 0), c.show(dump=True)
    assert c.id == block, c.id
    assert len(bytes(c.payload)) == 4 * lanes
    if p["family"] == ["canary"]:
        assert p["leader"] == ["round_robin"] and p["roots"][0] == "in_turn", "the check knows these policies only"
        roots = [int(x) for x in p["roots"][1:]]
        assert c.dst == p["hosts"][block % hosts][0], (c.dst, block)
        assert c.sw == roots[block % len(roots)], (c.sw, roots)
    else:
        assert c.sw == block % int(p["trees"][0])


if __name__ == "__main__":
    d, hexframe, block, rank = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    n = check_requests(d)
    check_frame(d, hexframe, block, rank)
    print(f"ok: {n} updates checked against the P4Info; the frame of block {block} parses as the program's header")
