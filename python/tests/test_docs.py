"""docs/python.md's walk-through runs as written: its ```python blocks in order, in one
namespace, in a copy of the examples (the files it writes stay out of the repository)."""

import re
import shutil

import pytest


def test_walk_through(repo, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib", reason="matplotlib is not installed (scripts/test-python installs it)")
    pytest.importorskip("pandas", reason="pandas is not installed (scripts/test-python installs it)")
    import matplotlib

    matplotlib.use("Agg")
    text = (repo / "docs" / "python.md").read_text()
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.M | re.S)
    assert len(blocks) >= 5
    shutil.copytree(repo / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "walk_through"}
    for i, block in enumerate(blocks):
        exec(compile(block, f"docs/python.md block {i + 1}", "exec"), namespace)
    assert (tmp_path / "dgx_compare.png").stat().st_size > 0
    assert (tmp_path / "dgx_winner.xml").read_bytes().startswith(b"<algo")
