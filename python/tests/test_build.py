"""`Session.build` against `collc build` byte for byte: every example, every target; where the
command line refuses, the session raises CheckError with the same codes."""

import os
from pathlib import Path

import collc
import pytest
from conftest import EXAMPLES, example_id, slow

TARGETS = ["goal", "msccl", "mpi", "p4"]


def tree(root: Path):
    """A directory's files as {relative path with '/': bytes}."""
    out = {}
    for dirpath, _, names in os.walk(root):
        for n in names:
            p = Path(dirpath) / n
            out[p.relative_to(root).as_posix()] = p.read_bytes()
    return out


def read(path: Path):
    return tree(path) if path.is_dir() else path.read_bytes()


def codes(stderr: str):
    import re

    return re.findall(r"^error\[(E\d{4})\]", stderr, re.M)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("example", EXAMPLES, ids=example_id)
def test_build_agrees_with_the_command_line(example, target, sessions, cli, tmp_path):
    slow(example, target)
    s = sessions(example)
    # The artifact's name matters (an MPI project is named after its directory): the same
    # name `out` everywhere.
    cli_out = tmp_path / "cli" / "out"
    cli_out.parent.mkdir()
    code, _, err = cli("build", f"examples/{example.name}", "--target", target, "-o", cli_out)
    if code != 0:
        with pytest.raises(collc.CheckError) as e:
            s.build(target, name="out")
        assert e.value.codes == codes(err)
        return
    want = read(cli_out)
    with _collecting() as warned:
        got = s.build(target, name="out")
    assert got == want
    assert isinstance(got, dict) == cli_out.is_dir()
    assert [w.code for w in warned] == _warning_codes(err)
    py_out = tmp_path / "py" / "out"
    py_out.parent.mkdir()
    with _collecting():
        assert s.build(target, out=py_out) == py_out
    assert read(py_out) == want
    assert not [p for p in py_out.parent.iterdir() if p.name != "out"], "a temporary was left"


@pytest.mark.parametrize("example", EXAMPLES, ids=example_id)
def test_declared_target(example, sessions, cli, tmp_path):
    s = sessions(example)
    declared = s.declared_targets()
    if len(declared) != 1:
        with pytest.raises(collc.CheckError) as e:
            s.build()
        assert e.value.diagnostics[0].is_error
        return
    slow(example, declared[0])
    out = tmp_path / "out"
    code, _, _ = cli("build", f"examples/{example.name}", "-o", out)
    assert code == 0
    with _collecting():
        assert s.build(name="out") == read(out)


def test_msccl_options(sessions, cli, tmp_path, repo):
    s = sessions(repo / "examples/ring_allreduce_4.coll")
    flags = ["--proto", "ll", "--channels", "2", "--instances", "2", "--inplace", "--min-bytes", "4096", "--max-bytes", "1048576"]
    code, _, err = cli("build", "examples/ring_allreduce_4.coll", "--target", "msccl", "-o", tmp_path / "x.xml", *flags)
    assert code == 0, err
    with pytest.warns(collc.CollcWarning, match="E0054") as warned:
        got = s.build("msccl", proto="ll", channels=2, instances=2, inplace=True, min_bytes=4096, max_bytes=1 << 20)
    assert warned[0].message.diagnostic.code in err
    assert got == (tmp_path / "x.xml").read_bytes()
    assert b'proto="LL"' in got


def test_unknown_target(sessions, repo):
    with pytest.raises(ValueError, match="no target named"):
        sessions(repo / "examples/quickstart.coll").build("fpga")


class _collecting:
    """Collects the CollcWarnings issued inside it (their diagnostics)."""

    def __enter__(self):
        import warnings

        self._catch = warnings.catch_warnings(record=True)
        self._list = self._catch.__enter__()
        warnings.simplefilter("always")
        self.diagnostics = []
        return self.diagnostics

    def __exit__(self, *exc):
        self.diagnostics.extend(
            w.message.diagnostic for w in self._list if isinstance(w.message, collc.CollcWarning)
        )
        return self._catch.__exit__(*exc)


def _warning_codes(stderr: str):
    import re

    return re.findall(r"^warning\[(E\d{4})\]", stderr, re.M)
