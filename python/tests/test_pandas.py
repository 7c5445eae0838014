"""Comparison.to_pandas(): a DataFrame where pandas is installed, a clear ImportError where it
is not (pandas is no dependency of collc)."""

import sys

import collc
import pytest


def test_to_pandas(sessions, repo):
    pandas = pytest.importorskip("pandas", reason="pandas is not installed (scripts/test-python installs it)")
    c = sessions(repo / "examples/dgx_a100_2x8.coll").compare(sizes="1MiB..64MiB")
    df = c.to_pandas()
    assert isinstance(df, pandas.DataFrame)
    assert list(df.columns) == [
        "bytes", "family", "schedule", "time_s", "algbw", "busbw", "winner", "error_code", "error"
    ]
    assert len(df) == len(c.rows) * len(c.families)
    busbw = df.pivot(index="bytes", columns="family", values="busbw")
    assert list(busbw.index) == c.sizes
    for row in c.rows:
        for cell in row.cells:
            assert busbw.loc[row.bytes, cell.family] == pytest.approx(cell.busbw)
    winners = df[df.winner].set_index("bytes")["family"]
    assert list(winners.items()) == c.winners()


def test_to_pandas_with_vary(sessions, repo):
    pytest.importorskip("pandas", reason="pandas is not installed (scripts/test-python installs it)")
    c = sessions(repo / "examples/ring_8.coll").compare(vary={"n": [4, 8]})
    df = c.to_pandas()
    assert "n" in df.columns and sorted(set(df["n"])) == ["4", "8"]


def test_to_pandas_without_pandas(sessions, repo, monkeypatch):
    c = sessions(repo / "examples/ring_8.coll").compare(sizes="1MiB")
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="pip install pandas"):
        c.to_pandas()
    assert c.to_dict()["rows"][0]["bytes"] == 1 << 20


def test_collc_does_not_import_pandas(repo):
    import subprocess

    code = "import sys, collc; collc.load('examples/ring_8.coll').compare(); print('pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
