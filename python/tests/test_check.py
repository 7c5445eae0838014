"""collc.check and collc.load: diagnostics as values, errors as CheckError, both as the
command line reports them."""

import json
import pickle

import collc
import pytest
from conftest import EXAMPLES, example_id

QUICKSTART = "examples/quickstart.coll"


@pytest.mark.parametrize("example", EXAMPLES, ids=example_id)
def test_every_example_checks_clean(example):
    assert collc.check(example) == []
    assert collc.check(str(example)) == []


def test_a_param_override_is_an_error_with_its_place():
    [d] = collc.check(QUICKSTART, params={"hosts": 10})
    assert (d.code, d.severity, d.is_error) == ("E0014", "error", True)
    assert d.message == "the stage factors multiply to 8, but there are 10 ranks"
    assert (d.file, d.line, d.column, d.end_line, d.end_column) == (QUICKSTART, 21, 13, 21, 21)
    assert d.label == "[a2, a4] multiplies to 8, not 10"
    assert "[a2, a5]" in d.help
    assert d.notes == []
    assert str(d).startswith("error[E0014]: the stage factors multiply to 8")
    assert d.to_dict()["code"] == "E0014"


def test_diagnostics_agree_with_the_command_line(cli):
    code, _, err = cli("check", QUICKSTART, "--param", "hosts=10", "--error-format", "json")
    assert code == 1
    want = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    got = collc.check(QUICKSTART, params={"hosts": 10})
    assert [
        (w["code"], w["severity"], w["message"], w["help"], w["notes"])
        + tuple(w["primary"][k] for k in ("file", "line", "column", "end_line", "end_column"))
        for w in want
    ] == [
        (d.code, d.severity, d.message, d.help, d.notes, d.file, d.line, d.column, d.end_line, d.end_column)
        for d in got
    ]


def test_check_error_renders_like_the_command_line(cli):
    _, _, err = cli("check", QUICKSTART, "--param", "hosts=10")
    with pytest.raises(collc.CheckError) as e:
        collc.load(QUICKSTART, params={"hosts": 10})
    assert e.value.codes == ["E0014"]
    assert isinstance(e.value, Exception)
    assert [d.code for d in e.value.diagnostics] == ["E0014"]
    # The command line adds a count ("1 error found") after the diagnostics.
    assert err.startswith(str(e.value))
    assert err[len(str(e.value)) :].strip() == "1 error found"
    assert type(e.value).__module__ == "collc"


def test_check_error_pickles():
    with pytest.raises(collc.CheckError) as e:
        collc.load(QUICKSTART, params={"hosts": 10})
    back = pickle.loads(pickle.dumps(e.value))
    assert back.codes == ["E0014"] and str(back) == str(e.value)


def test_text_is_checked_under_its_name(repo):
    text = (repo / QUICKSTART).read_text()
    assert collc.check(text) == []
    [d] = collc.check(text.replace("a4]", "a8]"), name="lab.coll")
    assert (d.code, d.file, d.line) == ("E0014", "lab.coll", 21)
    s = collc.load(text=text, name="lab.coll")
    assert s.name == "lab.coll"


def test_params_take_python_values():
    # bool, int, float and str (an expression of the language) are all written for the file.
    assert collc.check(QUICKSTART, params=[("hosts", 8)]) == []
    [d] = collc.check(QUICKSTART, params={"hosts": "2 * 5"})
    assert d.code == "E0014"
    with pytest.raises(TypeError):
        collc.check(QUICKSTART, params={"hosts": [8]})


def test_other_kinds_of_file(tmp_path, cli):
    s = collc.load("examples/ring_allreduce_4.coll")
    xml = tmp_path / "ring.xml"
    s.build("msccl", out=xml)
    assert collc.check(xml) == []
    goal = s.build("goal")
    assert collc.check(goal.decode(), name="ring.goal") == []
    ir = tmp_path / "ring.ir"
    ir.write_text(s.ir())
    assert collc.check(ir) == []
    broken = tmp_path / "broken.xml"
    broken.write_text(xml.read_text().replace('ngpus="4"', 'ngpus="5"'))
    code, _, err = cli("check", broken, "--error-format", "json")
    assert code == 1
    want = [json.loads(line)["code"] for line in err.splitlines() if line.startswith("{")]
    assert [d.code for d in collc.check(broken)] == want != []
    assert [d.code for d in collc.check(broken.read_text(), name="broken.xml")] == want


def test_unreadable_and_unknown_inputs(tmp_path):
    [d] = collc.check(tmp_path / "missing.coll")
    assert d.code == "E0029" and "cannot read" in d.message
    with pytest.raises(collc.CheckError) as e:
        collc.load(tmp_path / "missing.coll")
    assert e.value.codes == ["E0029"]
    odd = tmp_path / "notes.txt"
    odd.write_text("hello\nworld\n")
    [d] = collc.check(odd)
    assert d.code == "E0029"


def test_limits_by_name():
    assert collc.default_limits()["max_nodes"] > 0
    codes = [d.code for d in collc.check("examples/fat_tree_1024.coll", limits={"max_nodes": 10})]
    assert codes and codes[0].startswith("E")
    with pytest.raises(ValueError, match="no limit named"):
        collc.check(QUICKSTART, limits={"max_bananas": 1})


def test_bad_arguments():
    with pytest.raises(ValueError):
        collc.load()
    with pytest.raises(ValueError):
        collc.load("a.coll", text="param x = 1;\n")
    with pytest.raises(TypeError):
        collc.check(42)


def test_deep_nesting_is_a_diagnostic_not_a_crash():
    n = 20000
    [d] = collc.check("param x = " + "(" * n + "1" + ")" * n + ";\n", name="deep.coll")
    assert d.code == "E0001"
    n = 250
    assert collc.check("param x = " + "(" * n + "1" + ")" * n + ";\n", name="deep.coll") == []
