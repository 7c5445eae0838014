"""Diagnostics as values: :class:`Diagnostic`, the exception :class:`CheckError` and the
warning category :class:`CollcWarning`."""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence


@dataclass(frozen=True)
class Diagnostic:
    """One problem collc found, as ``collc check`` reports it.

    Lines and columns are 1-based; they are 0 when the place is in no file (an unreadable
    path, say). ``str(diagnostic)`` is the text the command line prints for it (no colour).
    """

    code: str
    """The stable code, ``"E0014"``; ``collc explain E0014`` tells more."""
    severity: str
    """``"error"`` or ``"warning"``."""
    message: str
    """What is wrong, in one line."""
    file: str
    """The file it points into (its path, or the name given to a text)."""
    line: int
    column: int
    end_line: int
    end_column: int
    label: str = ""
    """What the diagnostic says at its place."""
    help: Optional[str] = None
    """How to fix it, when collc knows."""
    notes: List[str] = field(default_factory=list)
    """Further notes."""
    rendered: str = field(default="", repr=False, compare=False)
    """The diagnostic as the command line prints it; also ``str(diagnostic)``."""

    @property
    def is_error(self) -> bool:
        """True for an error, False for a warning."""
        return self.severity == "error"

    def to_dict(self) -> Dict[str, Any]:
        """The diagnostic as a dict of plain values (for JSON, say)."""
        return dataclasses.asdict(self)

    def __str__(self) -> str:
        return self.rendered or f"{self.severity}[{self.code}]: {self.message}"

    @classmethod
    def _from_native(cls, d: Mapping[str, Any]) -> "Diagnostic":
        return cls(**d)


def _diagnostics(records: Sequence[Mapping[str, Any]]) -> List[Diagnostic]:
    return [Diagnostic._from_native(r) for r in records]


class CheckError(Exception):
    """A job stopped on its input: the file has errors, or a job on it cannot be done.

    ``diagnostics`` holds every diagnostic (errors, and the warnings that came with them);
    ``str(error)`` renders them as the command line does.
    """

    diagnostics: List[Diagnostic]

    def __init__(self, diagnostics: Sequence[Diagnostic], rendered: Optional[str] = None):
        self.diagnostics = list(diagnostics)
        if rendered is None:
            rendered = "".join(str(d) for d in self.diagnostics)
        super().__init__(rendered)

    def __reduce__(self) -> Any:
        return (type(self), (self.diagnostics, self.args[0] if self.args else ""))

    @property
    def codes(self) -> List[str]:
        """The diagnostics' codes, in order: ``["E0014"]``."""
        return [d.code for d in self.diagnostics]

    def __str__(self) -> str:
        return str(self.args[0]).rstrip("\n") if self.args else ""


class CollcWarning(UserWarning):
    """A warning collc made on a job whose result is plain text or bytes (``Session.ir``,
    ``Session.build``); ``diagnostic`` is the :class:`Diagnostic`. Jobs that return an object
    keep their warnings in its ``warnings`` instead."""

    diagnostic: Diagnostic

    def __init__(self, diagnostic: Diagnostic):
        self.diagnostic = diagnostic
        super().__init__(str(diagnostic).rstrip("\n"))


def _warn(records: Sequence[Mapping[str, Any]], stacklevel: int = 3) -> None:
    for d in _diagnostics(records):
        warnings.warn(CollcWarning(d), stacklevel=stacklevel)
