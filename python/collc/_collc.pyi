"""The native half of ``collc`` (Rust, PyO3): plain values in and out. Use the package
``collc`` instead; it wraps these in dataclasses and raises :class:`collc.CheckError`."""

from typing import Any, Dict, List, Optional, Sequence, Tuple

__version__: str

Record = Dict[str, Any]
"""A diagnostic: code, severity, message, file, line, column, end_line, end_column, label,
help, notes, rendered."""

class Failure(Exception):
    """A job stopped on its input; ``args`` are ``(rendered, diagnostics)``."""

    args: Tuple[str, List[Record]]

def check(
    path: Optional[str] = None,
    text: Optional[str] = None,
    name: Optional[str] = None,
    params: Sequence[Tuple[str, str]] = ...,
    limits: Optional[Dict[str, int]] = None,
    strict: bool = False,
) -> Tuple[Optional[str], List[Record]]:
    """Checks one file; returns its kind (``"coll"``, ``"xml"``, ``"ir"``, ``"goal"`` or
    ``None``) and its diagnostics."""

def load(
    path: Optional[str] = None,
    text: Optional[str] = None,
    name: Optional[str] = None,
    params: Sequence[Tuple[str, str]] = ...,
    limits: Optional[Dict[str, int]] = None,
) -> Session:
    """Checks a ``.coll`` file and resolves ``schedule auto``; raises :class:`Failure`."""

def default_limits() -> List[Tuple[str, int]]:
    """Every limit's name and default."""

class Session:
    """A checked ``.coll`` file, ``schedule auto`` resolved."""

    @property
    def name(self) -> str:
        """The name of the file it was loaded from."""
    def model_text(self) -> str:
        """The elaborated model as text (``collc build --emit model``)."""
    def auto_pick(self) -> Optional[Dict[str, Any]]:
        """What ``schedule auto`` chose (family, bytes, params, description, times)."""
    def ir(self) -> Tuple[str, List[Record]]:
        """The lowered program as IR text and lowering's warnings; raises :class:`Failure`."""
    def declared_targets(self) -> List[str]:
        """The targets the file declares that a build without a target makes."""
    def report(self, msccl: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        """The report under the MSCCL options (``proto``, ``channels``, ``instances``,
        ``inplace``, ``min_bytes``, ``max_bytes``, ``max_steps``; absent for the file's own):
        ``sections`` as ``(title, lines, warnings)``, ``warnings``, ``text``."""
    def build(
        self,
        target: Optional[str] = None,
        out: Optional[str] = None,
        name: Optional[str] = None,
        msccl: Optional[Dict[str, Any]] = None,
    ) -> Dict[str, Any]:
        """A target's artifact: ``target``, ``artifact`` (bytes, a list of ``(path, bytes)``, or
        ``None`` when written to ``out``) and ``warnings``."""
    def sim(
        self,
        model: Optional[str] = None,
        seed: Optional[int] = None,
        runs: Optional[int] = None,
        trace: bool = False,
        plot: bool = False,
        reduce_ns: int = 0,
        loggp: Optional[Dict[str, int]] = None,
        explore_run: Optional[int] = None,
    ) -> Dict[str, Any]:
        """The simulation's outcome: engine, kind, seconds, ranks, bytes, algbw and busbw (bytes
        per second), utilisation, complete, chunks, text, trace_json, plot_svg, warnings,
        unfinished."""
    def compare(
        self,
        sizes: Optional[str] = None,
        vary: Sequence[str] = ...,
        model: Optional[str] = None,
        families: Sequence[str] = ...,
        seed: int = 1,
        runs: int = 1,
        shard: Optional[str] = None,
        merge: Sequence[Tuple[Optional[str], Optional[str], Optional[str]]] = ...,
    ) -> Comparison:
        """The comparison over sizes (or ``vary``'s values); each option as the command line
        writes it; ``merge`` holds ``(path, text, name)`` per part."""

class Comparison:
    """A finished comparison, rendered by the command line's renderers."""

    def json(self) -> str:
        """``collc compare --format json``."""
    def table(self) -> str:
        """The table ``collc compare`` prints."""
    def csv(self) -> str:
        """``collc compare --format csv``."""
    def svg(self) -> str:
        """The chart as SVG text."""
    def part(self) -> Optional[str]:
        """What a ``shard`` run writes for ``merge``, else ``None``."""
