"""What the jobs on a session return: plain dataclasses, each with ``to_dict()``."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Tuple

from ._diagnostics import Diagnostic, _diagnostics

if TYPE_CHECKING:
    import pandas

    from . import _collc


@dataclass(frozen=True)
class Section:
    """One titled block of a report (``== title ==`` and its lines)."""

    title: str
    lines: List[str]
    warnings: List[Diagnostic] = field(default_factory=list)
    """Warnings made while making this section."""

    def to_dict(self) -> Dict[str, Any]:
        """The section as a dict of plain values."""
        return dataclasses.asdict(self)

    def __str__(self) -> str:
        return "".join([f"== {self.title} ==\n"] + [line + "\n" for line in self.lines])


@dataclass(frozen=True)
class Report:
    """What ``collc build FILE --emit report`` prints, as data: its sections in order.

    ``str(report)`` (or ``report.text``) is the text the command line prints; ``report["MSCCL:
    when the runtime uses this XML"]`` is one section by title (its start is enough:
    ``report["MSCCL"]``).
    """

    sections: List[Section]
    warnings: List[Diagnostic]
    """Every warning the report made, each once."""
    text: str = field(repr=False)
    """The report as the command line prints it."""

    def __getitem__(self, title: str) -> Section:
        for s in self.sections:
            if s.title == title:
                return s
        for s in self.sections:
            if s.title.startswith(title):
                return s
        raise KeyError(f"no section titled {title!r} (the titles: {self.titles})")

    @property
    def titles(self) -> List[str]:
        """The sections' titles, in order."""
        return [s.title for s in self.sections]

    def to_dict(self) -> Dict[str, Any]:
        """The report as a dict of plain values."""
        return dataclasses.asdict(self)

    def __str__(self) -> str:
        return self.text

    @classmethod
    def _from_native(cls, d: Mapping[str, Any]) -> "Report":
        return cls(
            sections=[Section(t, list(lines), _diagnostics(w)) for t, lines, w in d["sections"]],
            warnings=_diagnostics(d["warnings"]),
            text=d["text"],
        )


def _plain(v: Any) -> Any:
    """``v`` with every dataclass in it as a dict."""
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return dataclasses.asdict(v)
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


def _gbs(bps: Optional[float]) -> Optional[float]:
    return None if bps is None else bps / 1e9


@dataclass(frozen=True)
class SimResult:
    """What ``collc sim FILE`` found: the figures as numbers and the text it prints.

    Bandwidths are in GB/s (10^9 bytes per second) with nccl-tests' definitions, as
    ``collc sim`` and :class:`Comparison` give them.
    """

    kind: str
    """The simulator that ran: ``"flow"`` (flows on the file's network), ``"forest"`` (a
    forest's trees as pipelined flows), ``"packet"``, ``"loggp"``, ``"postal"``, or
    ``"replay"`` (a Canary exploration run replayed: its verdict is the text)."""
    engine: str
    """The model and its parameters, one line."""
    seconds: float
    """When the last rank finished (packet model with several runs: the median run's)."""
    ranks: List[float]
    """Each rank's finishing time, in seconds."""
    bytes: Optional[int]
    """The collective's size."""
    algbw: Optional[float]
    """Algorithm bandwidth, bytes over ``seconds``, in GB/s."""
    busbw: Optional[float]
    """Bus bandwidth, ``algbw`` times the collective's factor, in GB/s."""
    utilisation: Optional[float]
    """The mean share of the run each directed link spent moving data (flow and packet
    models)."""
    complete: bool
    """False when the schedule could not finish (``unfinished`` says why)."""
    chunks: Optional[int]
    """A forest's: the chunks each tree's data was pipelined in."""
    text: str = field(repr=False)
    """Exactly what ``collc sim`` prints."""
    trace_json: Optional[str] = field(default=None, repr=False)
    """The timeline as Chrome trace JSON, when ``trace=True`` asked for it."""
    plot_svg: Optional[str] = field(default=None, repr=False)
    """The link-utilisation chart as SVG, when ``plot=True`` asked for it."""
    warnings: List[Diagnostic] = field(default_factory=list)
    unfinished: Optional[List[Diagnostic]] = None
    """For a schedule that could not finish: the errors saying why."""

    def trace(self) -> Optional[Any]:
        """The trace, parsed (``None`` unless ``trace=True`` asked for it)."""
        return None if self.trace_json is None else json.loads(self.trace_json)

    def to_dict(self) -> Dict[str, Any]:
        """The outcome as a dict of plain values."""
        return dataclasses.asdict(self)

    def __str__(self) -> str:
        return self.text

    @classmethod
    def _from_native(cls, d: Mapping[str, Any]) -> "SimResult":
        d = dict(d)
        d["algbw"] = _gbs(d["algbw"])
        d["busbw"] = _gbs(d["busbw"])
        d["warnings"] = _diagnostics(d["warnings"])
        if d["unfinished"] is not None:
            d["unfinished"] = _diagnostics(d["unfinished"])
        return cls(**d)


@dataclass(frozen=True)
class Cell:
    """One family at one row of a comparison: simulated, or why not."""

    family: str
    time_s: Optional[float] = None
    algbw: Optional[float] = None
    """GB/s."""
    busbw: Optional[float] = None
    """GB/s."""
    error_code: Optional[str] = None
    """Why the family was not simulated here: its diagnostic's code and message."""
    error: Optional[str] = None

    @property
    def ok(self) -> bool:
        """True when the family was simulated here."""
        return self.time_s is not None


@dataclass(frozen=True)
class Row:
    """One row of a comparison: one size, or one combination of ``vary``'s values."""

    bytes: int
    """The collective's size."""
    winner: Optional[str]
    """The fastest family (ties to the earlier one), ``None`` when none ran."""
    cells: List[Cell]
    """One per family, in the comparison's family order."""
    values: Optional[List[str]] = None
    """With ``vary``: each varied ``param``'s value, as given."""
    ranks: Optional[int] = None
    """With ``vary``: the ranks at these values."""
    model: Optional[str] = None
    """With ``vary``: the model at these values."""


@dataclass(frozen=True)
class Family:
    """A family a comparison weighed."""

    family: str
    schedule: str
    """The family with its parameters: ``forest (k: auto, chunks: auto)``."""
    simulated: bool
    """False when it could not be built at any row (``Comparison.notes`` say why)."""


@dataclass(frozen=True)
class Crossover:
    """A row where the winner changes: ``from_family`` won the row before, ``to_family``
    wins from here on."""

    bytes: int
    from_family: str
    to_family: str
    values: Optional[List[str]] = None


@dataclass(frozen=True)
class Comparison:
    """What ``collc compare`` found: every family simulated at every row (size, or values
    of ``vary``), the winner per row and the crossovers.

    ``table()``, ``csv()`` and ``json()`` are the command line's three formats, ``svg()`` its
    chart; ``to_pandas()`` gives one DataFrame row per (row, family).
    """

    topology: str
    collective: str
    ranks: int
    dtype: str
    model: Dict[str, Any]
    """``kind`` (``"flow"`` or ``"packet"``), ``name`` (the declared model, or ``None``),
    ``overhead_s``, ``gamma_s_per_byte``, ``description``."""
    bus_factor: float
    """nccl-tests' bus-bandwidth factor of the collective."""
    families: List[Family]
    rows: List[Row]
    crossovers: List[Crossover]
    notes: List[str]
    """Why families were not simulated, where they were not."""
    vary: List[str] = field(default_factory=list)
    """The varied ``param``s, when the rows are their values."""
    _native: Optional["_collc.Comparison"] = field(
        default=None, repr=False, compare=False, metadata={"native": True}
    )

    @property
    def sizes(self) -> List[int]:
        """Each row's size in bytes."""
        return [r.bytes for r in self.rows]

    def winners(self) -> List[Tuple[int, Optional[str]]]:
        """``(bytes, winner)`` per row."""
        return [(r.bytes, r.winner) for r in self.rows]

    def table(self) -> str:
        """The table ``collc compare`` prints."""
        return self._renderer().table()

    def csv(self) -> str:
        """``collc compare --format csv``."""
        return self._renderer().csv()

    def json(self) -> str:
        """``collc compare --format json``."""
        return self._renderer().json()

    def svg(self) -> str:
        """The chart ``collc compare --plot OUT.svg`` draws, as SVG text."""
        return self._renderer().svg()

    def part(self) -> Optional[str]:
        """With ``shard``: what the shard writes for ``merge`` (JSON text); else ``None``."""
        return self._renderer().part()

    def _renderer(self) -> "_collc.Comparison":
        if self._native is None:
            raise ValueError("this Comparison was made in Python; only collc's own render")
        return self._native

    def to_dict(self) -> Dict[str, Any]:
        """The comparison as a dict of plain values."""
        return {
            f.name: _plain(getattr(self, f.name))
            for f in dataclasses.fields(self)
            if not f.metadata.get("native")
        }

    def __str__(self) -> str:
        return self.table()

    def to_pandas(self) -> "pandas.DataFrame":
        """One row per (comparison row, family): ``bytes``, each varied ``param``, ``family``,
        ``schedule``, ``time_s``, ``algbw`` and ``busbw`` (GB/s), ``winner`` (True for the
        row's fastest), ``error_code`` and ``error``. Needs pandas (not a dependency of
        collc: ``pip install pandas``)."""
        try:
            import pandas
        except ImportError as e:
            raise ImportError(
                "Comparison.to_pandas() needs pandas, which collc does not install: "
                "pip install pandas"
            ) from e
        schedule = {f.family: f.schedule for f in self.families}
        records = []
        for row in self.rows:
            for c in row.cells:
                r: Dict[str, Any] = {"bytes": row.bytes}
                for name, value in zip(self.vary, row.values or []):
                    r[name] = value
                r.update(
                    family=c.family,
                    schedule=schedule.get(c.family, c.family),
                    time_s=c.time_s,
                    algbw=c.algbw,
                    busbw=c.busbw,
                    winner=c.family == row.winner,
                    error_code=c.error_code,
                    error=c.error,
                )
                records.append(r)
        columns = ["bytes", *self.vary, "family", "schedule", "time_s", "algbw", "busbw"]
        columns += ["winner", "error_code", "error"]
        return pandas.DataFrame.from_records(records, columns=columns)

    @classmethod
    def _from_native(cls, native: "_collc.Comparison") -> "Comparison":
        d = json.loads(native.json())
        rows = []
        for s in d["sizes"]:
            cells = []
            for c in s["results"]:
                err = c.get("error") or {}
                cells.append(
                    Cell(
                        family=c["family"],
                        time_s=c.get("time_s"),
                        algbw=c.get("algbw_GBps"),
                        busbw=c.get("busbw_GBps"),
                        error_code=err.get("code"),
                        error=err.get("message"),
                    )
                )
            rows.append(
                Row(
                    bytes=s["bytes"],
                    winner=s.get("winner"),
                    cells=cells,
                    values=s.get("values"),
                    ranks=s.get("ranks"),
                    model=s.get("model"),
                )
            )
        return cls(
            topology=d["topology"],
            collective=d["collective"],
            ranks=d["ranks"],
            dtype=d["dtype"],
            model=d["model"],
            bus_factor=d["bus_factor"],
            families=[Family(**f) for f in d["families"]],
            rows=rows,
            crossovers=[
                Crossover(
                    bytes=x["bytes"], from_family=x["from"], to_family=x["to"], values=x.get("values")
                )
                for x in d["crossovers"]
            ],
            notes=d["notes"],
            vary=d.get("vary", []),
            _native=native,
        )
