"""Every job of a session on every example, each held against the command line that runs the
same driver call: the model, the IR, the report, the simulation and the comparison."""

import json
import re

import collc
import pytest
from conftest import EXAMPLES, example_id, slow


def rel(example):
    return f"examples/{example.name}"


@pytest.mark.parametrize("example", EXAMPLES, ids=example_id)
def test_model_text(example, sessions, cli):
    s = sessions(example)
    code, out, _ = cli("build", rel(example), "--emit", "model")
    assert code == 0
    assert s.model_text() == out.decode()
    assert s.name == rel(example)
    assert repr(s) == f"<collc.Session {rel(example)!r}>"


@pytest.mark.parametrize("example", EXAMPLES, ids=example_id)
def test_ir(example, sessions, cli):
    slow(example, "ir")
    s = sessions(example)
    code, out, err = cli("build", rel(example), "--emit", "ir")
    if code != 0:
        with pytest.raises(collc.CheckError) as e:
            s.ir()
        assert e.value.codes and e.value.codes[0] in err
        return
    with pytest.warns() if "warning[" in err else _no_warning():
        assert s.ir() == out.decode()


@pytest.mark.parametrize("example", EXAMPLES, ids=example_id)
def test_report(example, sessions, cli):
    slow(example, "report")
    s = sessions(example)
    code, out, err = cli("build", rel(example), "--emit", "report")
    assert code == 0, err
    r = s.report()
    assert str(r) == r.text == out.decode()
    assert "".join(str(sec) + "\n" for sec in r.sections).rstrip("\n") == r.text.rstrip("\n")
    assert r.titles[0] in ("schedule auto", "collective")
    assert r[r.titles[-1]] is r.sections[-1]
    assert [w.code for w in r.warnings] == [c for c in _codes(err)]
    assert r.to_dict()["sections"][0]["title"] == r.titles[0]


def test_report_takes_the_msccl_options(sessions, cli, repo):
    s = sessions(repo / "examples/ring_allreduce_4.coll")
    _, out, _ = cli("build", "examples/ring_allreduce_4.coll", "--emit", "report", "--proto", "ll128", "--out-of-place")
    r = s.report(proto="ll128", inplace=False)
    assert r.text == out.decode()
    assert "proto=LL128" in r["MSCCL"].lines[0]
    with pytest.raises(ValueError, match="proto"):
        s.report(proto="fast")


@pytest.mark.parametrize("example", EXAMPLES, ids=example_id)
def test_sim(example, sessions, cli):
    slow(example, "sim")
    s = sessions(example)
    code, out, err = cli("sim", rel(example))
    if code != 0 and not out:
        with pytest.raises(collc.CheckError) as e:
            s.sim()
        assert e.value.codes[0] in err
        return
    r = s.sim()
    assert r.text == out.decode() == str(r)
    assert r.complete == (code == 0)
    assert r.kind in ("flow", "forest", "packet", "loggp", "postal")
    if r.kind != "packet":
        assert len(r.ranks) > 0 and max(r.ranks) == pytest.approx(r.seconds)
    if r.bytes is not None and r.seconds > 0:
        assert r.algbw == pytest.approx(r.bytes / r.seconds / 1e9)
    assert r.to_dict()["seconds"] == r.seconds


def test_sim_options(sessions, cli, repo):
    s = sessions(repo / "examples/quickstart.coll")
    r = s.sim(plot=True, trace=True)
    assert r.plot_svg.startswith("<svg") or "<svg" in r.plot_svg[:200]
    events = r.trace()
    assert events
    packet = sessions(repo / "examples/canary_small.coll")
    code, out, _ = cli("sim", "examples/canary_small.coll", "--seed", "3", "--runs", "3")
    assert code == 0
    p = packet.sim(seed=3, runs=3)
    assert p.kind == "packet" and p.text == out.decode()
    code, _, err = cli("sim", "examples/quickstart.coll", "--seed", "3")
    assert code == 1
    with pytest.raises(collc.CheckError) as e:
        s.sim(seed=3)
    assert e.value.codes == re.findall(r"^error\[(E\d{4})\]", err, re.M)


@pytest.mark.parametrize("example", EXAMPLES, ids=example_id)
def test_compare(example, sessions, cli):
    slow(example, "compare")
    s = sessions(example)
    code, out, err = cli("compare", rel(example))
    if code != 0:
        with pytest.raises(collc.CheckError) as e:
            s.compare()
        assert e.value.codes[0] in err
        return
    c = s.compare()
    assert c.table() == str(c) == out.decode()
    _, csv, _ = cli("compare", rel(example), "--format", "csv")
    assert c.csv() == csv.decode()
    _, js, _ = cli("compare", rel(example), "--format", "json")
    assert c.json() == js.decode()
    d = json.loads(js)
    assert c.sizes == [row["bytes"] for row in d["sizes"]]
    assert [w for _, w in c.winners()] == [row.get("winner") for row in d["sizes"]]
    assert [f.family for f in c.families] == [f["family"] for f in d["families"]]
    assert c.to_dict()["topology"] == d["topology"]
    assert c.svg().lstrip().startswith("<svg")


def test_compare_options(sessions, cli, repo):
    s = sessions(repo / "examples/quickstart.coll")
    _, out, _ = cli("compare", "examples/quickstart.coll", "--sizes", "1KiB,1MiB", "--families", "ring,recursive_doubling")
    c = s.compare(sizes=[1024, 1 << 20], families=["ring", "recursive_doubling"])
    assert c.table() == out.decode()
    assert c.sizes == [1024, 1 << 20]
    assert [f.family for f in c.families] == ["ring", "recursive_doubling"]
    with pytest.raises(collc.CheckError) as e:
        s.compare(sizes="1KiB..banana")
    assert e.value.diagnostics[0].file == "<command line>"


def test_compare_vary_shard_and_merge(sessions, cli, repo):
    s = sessions(repo / "examples/ring_8.coll")
    whole = s.compare(vary={"n": [4, 8]})
    _, out, _ = cli("compare", "examples/ring_8.coll", "--vary", "n=4,8")
    assert whole.table() == out.decode()
    assert whole.vary == ["n"] and [r.values for r in whole.rows] == [["4"], ["8"]]
    parts = [s.compare(vary={"n": [4, 8]}, shard=f"{k}/2").part() for k in (1, 2)]
    assert all(p is not None for p in parts)
    merged = s.compare(vary={"n": [4, 8]}, merge=parts)
    assert merged.table() == whole.table()
    assert whole.part() is None


class _no_warning:
    """A context in which no CollcWarning may be issued."""

    def __enter__(self):
        import warnings

        self._catch = warnings.catch_warnings()
        self._catch.__enter__()
        warnings.simplefilter("error", collc.CollcWarning)

    def __exit__(self, *exc):
        return self._catch.__exit__(*exc)


def _codes(text):
    import re

    return re.findall(r"^warning\[(E\d{4})\]", text, re.M)
