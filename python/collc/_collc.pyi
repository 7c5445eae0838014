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
