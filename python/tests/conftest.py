"""Fixtures of the Python package's tests: the repository (COLLC_REPO, else the one these
tests are in), its examples, and the command line (COLLC_BIN) to hold the package against.

The tests run through the installed wheel (scripts/test-python builds and installs it); an
import of the source tree's `python/collc` instead would test nothing, so it fails here.
Jobs that take long on an example in the test profile are listed in SLOW with the reason and
run only with COLLC_PY_SLOW=1.
"""

import os
import subprocess
from pathlib import Path

import collc
import pytest

REPO = Path(os.environ.get("COLLC_REPO", Path(__file__).resolve().parents[2]))
EXAMPLES = sorted((REPO / "examples").glob("*.coll"))

# (example, job) -> why it is not run by default: each takes over 10 s on the test profile's
# build with the command line run beside it (measured on the 2-core CI machine), and the
# agreement they show is shown on the smaller examples too.
SLOW = {
    ("dgx_a100_fat_tree_1024", "ir"): "the proved IR of 1,024 GPUs: about 12 s",
    ("dgx_a100_fat_tree_1024", "report"): "the report builds MSCCL XML for 1,024 GPUs: minutes",
    ("dgx_a100_fat_tree_1024", "sim"): "1,024 GPUs' forest as flows: about 14 s",
    ("dgx_a100_fat_tree_1024", "goal"): "GOAL for 1,024 GPUs: about 24 s",
    ("dgx_a100_fat_tree_1024", "msccl"): "MSCCL XML for 1,024 GPUs: over 5 minutes",
    ("dgx_a100_fat_tree_1024", "compare"): "every family on 1,024 GPUs: minutes",
    ("dgx_h100_2x8", "ir"): "the proved IR of a 256 MiB forest allreduce: about 21 s",
    ("dgx_h100_2x8", "goal"): "GOAL of a 256 MiB forest allreduce: about 35 s",
    ("canary_fig7", "compare"): "packet simulation of 1,024 hosts per cell: minutes",
    ("canary_sweeps", "compare"): "packet simulation of 1,024 hosts per cell: minutes",
    ("fat_tree_1024", "compare"): "every family on 1,024 hosts: minutes",
    ("mi250_2x16", "compare"): "forests on 32 GPUs at 21 sizes: about a minute",
}


def example_id(path: Path) -> str:
    return path.stem


def slow(example: Path, job: str):
    """Skips `job` on `example` when it is in SLOW (unless COLLC_PY_SLOW=1)."""
    why = SLOW.get((example.stem, job))
    if why and os.environ.get("COLLC_PY_SLOW") != "1":
        pytest.skip(f"{why} (COLLC_PY_SLOW=1 runs it)")


def pytest_sessionstart(session):
    source = (REPO / "python" / "collc").resolve()
    installed = Path(collc.__file__).resolve().parent
    assert installed != source, f"collc was imported from the source tree ({installed}), not the wheel"


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def collc_bin() -> Path:
    """The `collc` binary; the test is skipped without COLLC_BIN."""
    b = os.environ.get("COLLC_BIN")
    if not b:
        pytest.skip("COLLC_BIN names no collc binary (scripts/test-all sets it)")
    return Path(b)


@pytest.fixture(scope="session")
def cli(collc_bin):
    """Runs `collc ARGS...` in the repository: (exit code, stdout bytes, stderr text)."""

    def run(*args, timeout=600):
        p = subprocess.run(
            [str(collc_bin), *map(str, args)],
            cwd=REPO,
            capture_output=True,
            timeout=timeout,
            env={**os.environ, "NO_COLOR": "1"},
        )
        return p.returncode, p.stdout, p.stderr.decode()

    return run


@pytest.fixture(scope="session")
def sessions():
    """One loaded session per example (relative paths, as the command line is given them),
    loaded once."""
    cache = {}

    def get(example: Path) -> collc.Session:
        if example.stem not in cache:
            cache[example.stem] = collc.load(example.relative_to(REPO))
        return cache[example.stem]

    return get


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch):
    monkeypatch.chdir(REPO)
