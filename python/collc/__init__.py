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
from ._results import Cell, Comparison, Crossover, Family, Report, Row, Section, SimResult
from ._session import AutoPick, Session, check, default_limits, load

__all__ = [
    "AutoPick",
    "Cell",
    "CheckError",
    "CollcWarning",
    "Comparison",
    "Crossover",
    "Diagnostic",
    "Family",
    "Report",
    "Row",
    "Section",
    "Session",
    "SimResult",
    "__version__",
    "check",
    "default_limits",
    "load",
]

# The public classes are collc's wherever they are defined (tracebacks show `collc.CheckError`,
# pickles name `collc.Diagnostic`).
for _name in __all__:
    _obj = globals()[_name]
    if isinstance(_obj, type):
        _obj.__module__ = __name__
del _name, _obj
