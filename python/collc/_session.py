"""Loading and checking files: :func:`check`, :func:`load` and :class:`Session`."""

from __future__ import annotations

import dataclasses
import os
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from . import _collc
from ._diagnostics import CheckError, Diagnostic, _diagnostics, _warn
from ._results import Comparison, Report, SimResult

PathLike = Union[str, "os.PathLike[str]"]
ParamValue = Union[str, int, float, bool]
Params = Union[Mapping[str, ParamValue], Sequence[Tuple[str, ParamValue]], None]


@contextmanager
def _raising() -> Iterator[None]:
    """Turns the native module's ``Failure`` into :class:`CheckError`."""
    try:
        yield
    except _collc.Failure as e:
        rendered, records = e.args
        raise CheckError(_diagnostics(records), rendered) from None


def _value(v: ParamValue) -> str:
    """A ``param`` override in the language's syntax: a ``str`` is an expression of the
    language as it stands (``"25 GB/s"``, ``'"eth0"'``), numbers and booleans are written as
    literals."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return format(Decimal(repr(v)), "f")
    if isinstance(v, str):
        return v
    raise TypeError(
        f"a param value is a str (an expression of the language), int, float or bool, "
        f"not {type(v).__name__}"
    )


def _params(params: Params) -> List[Tuple[str, str]]:
    if params is None:
        return []
    items = params.items() if isinstance(params, Mapping) else params
    return [(str(k), _value(v)) for k, v in items]


def _limits(limits: Optional[Mapping[str, int]]) -> Optional[Dict[str, int]]:
    return None if limits is None else {str(k): int(v) for k, v in limits.items()}


def default_limits() -> Dict[str, int]:
    """The limits ``check`` and ``load`` apply unless ``limits=`` says otherwise, by name
    (``max_nodes``, ``max_links``, ``max_iterations``, ``max_depth``, ``max_ops``,
    ``max_slots``, ``max_events``, ``max_packets``)."""
    return dict(_collc.default_limits())


def check(
    path_or_text: PathLike,
    params: Params = None,
    *,
    name: Optional[str] = None,
    strict: bool = False,
    limits: Optional[Mapping[str, int]] = None,
) -> List[Diagnostic]:
    """Checks one file of any kind collc reads and returns its diagnostics (``[]`` when it
    is clean); like ``collc check FILE``, it does not raise on problems in the file.

    ``path_or_text`` is a path (a ``str`` without a newline, or an ``os.PathLike``) or the
    text of a file (a ``str`` with a newline in it). Its kind is told by extension (``.coll``, MSCCL
    ``.xml``, ``.ir``, ``.goal``), else by its first words. ``name`` is the name a text is
    shown under in diagnostics (and typed by). ``params`` overrides the file's ``param``s
    (``{"hosts": 10, "bw": "100 Gbps"}``: a ``str`` is an expression of the language);
    ``strict`` makes the warnings of MSCCL XML errors; ``limits`` overrides limits by name
    (see :func:`default_limits`).
    """
    path, text = _source(path_or_text)
    _, records = _collc.check(
        path=path,
        text=text,
        name=name,
        params=_params(params),
        limits=_limits(limits),
        strict=strict,
    )
    return _diagnostics(records)


def _source(source: PathLike) -> Tuple[Optional[str], Optional[str]]:
    if isinstance(source, str):
        return (None, source) if "\n" in source else (source, None)
    if isinstance(source, os.PathLike):
        return os.fspath(source), None
    raise TypeError(f"expected a path or the text of a file, not {type(source).__name__}")


def _vary(vary: Union[Mapping[str, Iterable[ParamValue]], Iterable[str], None]) -> List[str]:
    """``vary`` as ``--vary NAME=V1,V2`` values."""
    if vary is None:
        return []
    if isinstance(vary, Mapping):
        return [f"{k}=" + ",".join(_value(v) for v in vs) for k, vs in vary.items()]
    return [str(v) for v in vary]


def _merge_part(p: PathLike) -> Tuple[Optional[str], Optional[str], Optional[str]]:
    """A part for ``merge``: ``(path, text, name)``."""
    path, text = _source(p)
    return (path, text, None if text is None else "<part>")


def load(
    path: Optional[PathLike] = None,
    text: Optional[str] = None,
    params: Params = None,
    *,
    name: Optional[str] = None,
    limits: Optional[Mapping[str, int]] = None,
) -> "Session":
    """Checks a ``.coll`` file and resolves ``schedule auto``: the :class:`Session` every
    other job starts from. Give ``path`` or ``text`` (shown as ``name`` in diagnostics,
    ``"<text>"`` unless given); ``params`` and ``limits`` are as for :func:`check`.

    Raises :class:`CheckError` when the file has any problem (its warnings too, as the
    command line's ``build`` does).
    """
    if path is not None and text is not None:
        raise ValueError("give `path` or `text`, not both")
    with _raising():
        native = _collc.load(
            path=None if path is None else os.fspath(path),
            text=text,
            name=name,
            params=_params(params),
            limits=_limits(limits),
        )
    return Session(native)


@dataclass(frozen=True)
class AutoPick:
    """What ``schedule auto`` chose and why: every candidate family simulated on the
    topology at the file's size (flow model)."""

    family: str
    """The family built."""
    bytes: int
    """The message size it was chosen for."""
    params: str
    """The flow model's parameters."""
    times: List[Tuple[str, Optional[float], Optional[str]]]
    """Each candidate: ``(family, seconds, None)``, or ``(family, None, reason)`` when it
    could not be built."""
    description: str
    """The one line ``--emit model`` ends with."""

    def to_dict(self) -> Dict[str, Any]:
        """The choice as a dict of plain values."""
        return dataclasses.asdict(self)

    def __str__(self) -> str:
        return self.description



def _msccl(
    proto: Optional[str],
    channels: Optional[int],
    instances: Optional[int],
    inplace: Optional[bool],
    min_bytes: Optional[int],
    max_bytes: Optional[int],
    max_steps: Optional[int],
) -> Dict[str, Any]:
    """The MSCCL options of :meth:`Session.report` and :meth:`Session.build` as the native
    layer takes them: one dict, the options given by name (``None``: the file's own)."""
    given = {
        "proto": proto,
        "channels": channels,
        "instances": instances,
        "inplace": inplace,
        "min_bytes": min_bytes,
        "max_bytes": max_bytes,
        "max_steps": max_steps,
    }
    return {k: v for k, v in given.items() if v is not None}

class Session:
    """A checked ``.coll`` file with ``schedule auto`` resolved (made by :func:`load`).

    Every job on it runs in Rust with the interpreter released, so other Python threads run
    meanwhile, and one session may be used from several threads at once. Ctrl-C stops a
    long job: collc's work is cancelled and ``KeyboardInterrupt`` raised (press it again to
    stop waiting for the job to wind down). The cancellation reaches every job of the
    session running at that moment; one in another thread ends with :class:`CheckError`
    E0061.
    """

    __slots__ = ("_native",)

    def __init__(self, native: "_collc.Session"):
        self._native = native

    @property
    def name(self) -> str:
        """The path or name the file was loaded from."""
        return self._native.name

    @property
    def auto_pick(self) -> Optional[AutoPick]:
        """What ``schedule auto`` chose, or ``None`` when the file names its schedule."""
        d = self._native.auto_pick()
        if d is None:
            return None
        d["times"] = [tuple(t) for t in d["times"]]
        return AutoPick(**d)

    def model_text(self) -> str:
        """The elaborated model as text, as ``collc build --emit model`` prints it."""
        return self._native.model_text()

    def ir(self) -> str:
        """The schedule lowered into the dataflow IR and proved, as text (``collc build
        --emit ir``). Lowering's warnings are issued as :class:`CollcWarning`; raises
        :class:`CheckError` when the schedule cannot be lowered."""
        with _raising():
            text, warnings = self._native.ir()
        _warn(warnings)
        return text

    def declared_targets(self) -> List[str]:
        """The targets the file declares that :meth:`build` makes without ``target``
        (``target sim`` is :meth:`sim`'s and does not count)."""
        return list(self._native.declared_targets())

    def report(
        self,
        *,
        proto: Optional[str] = None,
        channels: Optional[int] = None,
        instances: Optional[int] = None,
        inplace: Optional[bool] = None,
        min_bytes: Optional[int] = None,
        max_bytes: Optional[int] = None,
        max_steps: Optional[int] = None,
    ) -> Report:
        """The report (``collc build FILE --emit report``): the schedule's modelled cost,
        its cost on the network, the MSCCL XML and when the runtime uses it, what to run
        next, as :class:`Report` sections. The MSCCL options are the command line's flags
        (``proto="ll128"`` is ``--proto ll128``, ``inplace=False`` is ``--out-of-place``)
        over the file's ``target msccl`` block."""
        with _raising():
            d = self._native.report(
                msccl=_msccl(proto, channels, instances, inplace, min_bytes, max_bytes, max_steps)
            )
        return Report._from_native(d)

    def build(
        self,
        target: Optional[str] = None,
        out: Optional[PathLike] = None,
        *,
        name: Optional[str] = None,
        proto: Optional[str] = None,
        channels: Optional[int] = None,
        instances: Optional[int] = None,
        inplace: Optional[bool] = None,
        min_bytes: Optional[int] = None,
        max_bytes: Optional[int] = None,
        max_steps: Optional[int] = None,
    ) -> Union[bytes, Dict[str, bytes], Path]:
        """Builds a target's artifact, as ``collc build FILE --target TARGET``: ``"msccl"``
        (MSCCL XML), ``"goal"`` (GOAL text), ``"mpi"`` (a Cargo project) or ``"p4"`` (switch
        programs, entries, the hosts' program); without ``target``, the one the file
        declares.

        Returns the bytes of a file artifact, or a dict of a directory's files (relative
        path to bytes); ``name`` names the artifact (an MPI project is named after it). With
        ``out``, writes the artifact there instead, atomically (a file, or a directory for
        ``mpi`` and ``p4``), and returns ``out`` as a :class:`~pathlib.Path`. The MSCCL
        options are those of :meth:`report`. Warnings are issued as :class:`CollcWarning`;
        raises :class:`CheckError` when the target cannot build this file.
        """
        with _raising():
            d = self._native.build(
                target=target,
                out=None if out is None else os.fspath(out),
                name=name,
                msccl=_msccl(proto, channels, instances, inplace, min_bytes, max_bytes, max_steps),
            )
        _warn(d["warnings"])
        artifact = d["artifact"]
        if artifact is None:
            return Path(os.fspath(out))  # type: ignore[arg-type]
        if isinstance(artifact, bytes):
            return artifact
        return dict(artifact)

    def sim(
        self,
        model: Optional[str] = None,
        seed: Optional[int] = None,
        runs: Optional[int] = None,
        *,
        trace: bool = False,
        plot: bool = False,
        reduce_ns: int = 0,
        loggp: Optional[Mapping[str, int]] = None,
        explore_run: Optional[int] = None,
    ) -> SimResult:
        """Simulates the schedule, as ``collc sim FILE``: under the declared model ``model``
        (a ``flow``, ``packet``, ``postal`` or ``loggp`` model of the file), else the one
        the file implies (its ``sim`` target's, its only model, or the flow model on its
        network). ``seed`` and ``runs`` are the packet model's (each figure the median of
        ``runs`` runs); ``trace`` records the timeline (:attr:`SimResult.trace_json`),
        ``plot`` draws the link-utilisation chart (:attr:`SimResult.plot_svg`); ``loggp``
        overrides LogGP parameters (``{"L": 2500, "o": 1500}``: ``L``, ``o``, ``g``, ``G``,
        ``O``, ``S``, and ``wrap``); ``reduce_ns`` adds the time of every reduction under a
        postal or LogGP model; ``explore_run`` replays one of Canary's exploration runs.
        """
        with _raising():
            d = self._native.sim(
                model=model,
                seed=seed,
                runs=runs,
                trace=trace,
                plot=plot,
                reduce_ns=reduce_ns,
                loggp=None if loggp is None else {str(k): int(v) for k, v in loggp.items()},
                explore_run=explore_run,
            )
        return SimResult._from_native(d)

    def compare(
        self,
        sizes: Union[str, Iterable[int], None] = None,
        families: Optional[Iterable[str]] = None,
        model: Optional[str] = None,
        *,
        vary: Union[Mapping[str, Iterable[ParamValue]], Iterable[str], None] = None,
        seed: int = 1,
        runs: int = 1,
        shard: Optional[str] = None,
        merge: Optional[Iterable[PathLike]] = None,
    ) -> Comparison:
        """Compares every schedule family that implements the file's collective over a
        sweep, as ``collc compare FILE``: each family simulated at each size (the flow
        model, or a packet model named by ``model`` or the file), the winner per size and
        the crossovers.

        ``sizes`` is a sweep as ``--sizes`` writes it (``"1KiB..1GiB"``, ``"8B,1MiB"``) or
        sizes in bytes (``[1024, 1 << 20]``); default 1 KiB to 1 GiB under a flow model.
        ``families`` keeps only those families. ``vary`` sweeps ``param`` values instead of
        sizes (``{"hosts": [4, 8, 16]}``, the file checked with each). ``seed`` and
        ``runs`` are the packet model's. ``shard`` (``"2/3"``) runs one part of the sweep
        (:meth:`Comparison.part` is what it writes) and ``merge`` puts such parts (paths, or
        their text) back together. Raises :class:`CheckError` on a bad option; Ctrl-C stops
        the sweep between cells.
        """
        if sizes is not None and not isinstance(sizes, str):
            sizes = ",".join(f"{int(b)}B" for b in sizes)
        with _raising():
            native = self._native.compare(
                sizes=sizes,
                vary=_vary(vary),
                model=model,
                families=[] if families is None else list(families),
                seed=seed,
                runs=runs,
                shard=shard,
                merge=[_merge_part(p) for p in merge or []],
            )
        return Comparison._from_native(native)

    def __repr__(self) -> str:
        return f"<collc.Session {self.name!r}>"
