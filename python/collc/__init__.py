"""collc from Python: check ``.coll`` files, load one into a session, and run collc's jobs
on it, each returning plain Python values.

>>> import collc
>>> s = collc.load("examples/quickstart.coll")
>>> print(s.model_text())        # doctest: +SKIP

Problems in a file raise :class:`CheckError`, whose ``diagnostics`` carry each one's code,
place and help, and whose ``str()`` renders them as the command line does.
"""

from ._collc import __version__
from ._diagnostics import CheckError, CollcWarning, Diagnostic
from ._session import AutoPick, Session, check, default_limits, load

__all__ = [
    "AutoPick",
    "CheckError",
    "CollcWarning",
    "Diagnostic",
    "Session",
    "__version__",
    "check",
    "default_limits",
    "load",
]
