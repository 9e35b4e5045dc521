"""Scenarios as Python values: load, build, override, check and run them.

A :class:`Scenario` is a TOML scenario (``docs/scenarios.md``) plus the overrides set on
it, and is immutable: :meth:`Scenario.set` returns a new scenario. Every scenario made
by this module has been checked by the engine, so a mistake is reported where it is
made, as a :class:`mobiflow.ScenarioError` naming the key::

    import mobiflow

    base = mobiflow.Scenario.load("scenarios/examples/rwnd_limited.toml")
    fast = base.set("tcp.rcv_buf", "1MB").set("flows.bulk.cc", "cubic")
    run = fast.run()
    run.flows["goodput_bps"]          # bits per second

or built in code, with the same keys and units as the TOML file::

    sc = mobiflow.Scenario.build(
        name="demo",
        duration="30s",
        links=[mobiflow.link("server", "phone", rate="10Mbps", delay="20ms")],
        flows=[mobiflow.flow("server", "phone", cc="cubic")],
    )

Values with units are strings (``"15Mbps"``, ``"265ms"``, ``"256KB"``); bare numbers
are in the base unit (bits per second, seconds, bytes).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from mobiflow import _mobiflow, _resources
from mobiflow.api import (
    Budget,
    Overrides,
    PathLike,
    refuse_lost_captures,
    resolve_budget,
    to_overrides,
)

if TYPE_CHECKING:
    from mobiflow.outputs import Run

__all__ = ["Scenario", "flow", "link"]


@dataclass(frozen=True)
class Scenario:
    """A checked scenario: TOML text, the file it stands for, and overrides.

    Make one with :meth:`load`, :meth:`from_toml`, :meth:`from_dict` or :meth:`build`;
    do not call the constructor (it does not check).
    """

    text: str
    """The TOML text the scenario was made from (before overrides)."""
    source: Path | None = None
    """The file the text stands for: messages name it and relative trace paths resolve
    against its folder. ``None`` for a scenario built in code (paths resolve against
    the current directory)."""
    overrides: tuple[tuple[str, str], ...] = ()
    """``(dotted key, value text)`` pairs applied on top of :attr:`text`, in order."""
    _description: dict[str, Any] = field(
        default_factory=dict, compare=False, hash=False, repr=False
    )

    # -- making one ---------------------------------------------------------------------

    @classmethod
    def load(cls, path: PathLike, set: Overrides | None = None) -> Scenario:  # noqa: A002
        """Read and check the scenario file ``path``, with optional overrides.

        A relative path that names no file here may name a scenario the package ships
        (``"examples/outage.toml"``, ``"afc/motivation"``).

        Raises :class:`mobiflow.ScenarioError` (naming the file and key) if it is wrong,
        ``OSError`` if it cannot be read.
        """
        source = Path(path)
        source = _resources.shipped_scenario(source) or source
        return cls.from_toml(source.read_text(encoding="utf-8"), source=source, set=set)

    @classmethod
    def from_toml(
        cls,
        text: str,
        source: PathLike | None = None,
        set: Overrides | None = None,  # noqa: A002
    ) -> Scenario:
        """Check TOML text as a scenario; ``source`` names the file it stands for."""
        scenario = cls(text, None if source is None else Path(source), tuple(to_overrides(set)))
        scenario._check()
        return scenario

    @classmethod
    def from_dict(
        cls,
        data: Mapping[str, Any],
        source: PathLike | None = None,
        set: Overrides | None = None,  # noqa: A002
    ) -> Scenario:
        """A scenario from a dict that mirrors the TOML file (``{"run": {...}, "links":
        [...], "flows": [...]}``). ``None`` values are refused: leave a key out to get
        its default."""
        text = _mobiflow.json_to_toml(json.dumps(_plain(data)))
        return cls.from_toml(text, source=source, set=set)

    @classmethod
    def build(
        cls,
        *,
        links: list[Mapping[str, Any]],
        flows: list[Mapping[str, Any]],
        name: str | None = None,
        duration: str | float | None = None,
        seed: int | None = None,
        tcp: Mapping[str, Any] | None = None,
        measure: Mapping[str, Any] | None = None,
    ) -> Scenario:
        """A scenario from its parts; see :func:`link` and :func:`flow`.

        ``duration`` is simulated time (``"30s"``, or seconds); ``tcp`` holds defaults
        for every TCP flow (``{"rcv_buf": "256KB"}``); ``measure`` the sampling period
        and named intervals (``{"intervals": {"steady": ["10s", "30s"]}}``).
        """
        data: dict[str, Any] = {}
        if name is not None:
            data["name"] = name
        run: dict[str, Any] = {}
        if duration is not None:
            run["duration"] = duration
        if seed is not None:
            run["seed"] = seed
        if run:
            data["run"] = run
        if tcp:
            data["tcp"] = dict(tcp)
        data["links"] = [dict(x) for x in links]
        data["flows"] = [dict(x) for x in flows]
        if measure:
            data["measure"] = dict(measure)
        return cls.from_dict(data)

    # -- changing one -------------------------------------------------------------------

    def set(self, key: str, value: object) -> Scenario:
        """A new scenario with the value at the dotted ``key`` replaced.

        Keys are those of ``--set``: ``"flows.0.cc"``, ``"flows.bulk.reader"``,
        ``"links.access.ba.rate"``, ``"run.seed"``. A Python value is spelled as TOML
        (dicts become inline tables); a string is read as ``--set`` reads it. Raises
        :class:`mobiflow.ScenarioError` naming the key if the key or value is wrong.
        """
        return self.update({key: value})

    def update(self, overrides: Overrides) -> Scenario:
        """:meth:`set` for several keys at once (``{key: value}`` or pairs, in order);
        checked once, after all are applied."""
        new = Scenario(self.text, self.source, self.overrides + tuple(to_overrides(overrides)))
        new._check()
        return new

    def with_seed(self, seed: int) -> Scenario:
        """The same scenario with ``run.seed`` set."""
        return self.set("run.seed", seed)

    # -- looking at one -----------------------------------------------------------------

    def _check(self) -> None:
        if not self._description:
            text = _mobiflow.validate_str(self.text, list(self.overrides), self._source())
            self._description.update(json.loads(text))

    def _source(self) -> str | None:
        return None if self.source is None else os.fspath(self.source)

    def validate(self) -> dict[str, Any]:
        """The engine's description of the scenario (what ``mobiflow validate --json``
        prints): rates in bits per second, delays and times in seconds, sizes in bytes,
        and the ``assumed`` parameters."""
        self._check()
        copy: dict[str, Any] = json.loads(json.dumps(self._description))
        return copy  # the caller may change it

    @property
    def name(self) -> str:
        """The scenario's name (``name``, else the file's stem, else ``"scenario"``)."""
        self._check()
        return cast(str, self._description["scenario"])

    @property
    def seed(self) -> int:
        """``run.seed``."""
        self._check()
        return cast(int, self._description["seed"])

    @property
    def duration_s(self) -> float:
        """``run.duration`` in seconds."""
        self._check()
        return cast(float, self._description["duration_s"])

    def to_toml(self) -> str:
        """The scenario as TOML text, overrides applied. Without overrides this is the
        text it was made from, comments included; with them the document is written
        anew (keys sorted, no comments)."""
        return _mobiflow.apply_overrides(self.text, list(self.overrides), self._source())

    def to_dict(self) -> dict[str, Any]:
        """The scenario as a dict mirroring the TOML file, overrides applied."""
        doc = _mobiflow.toml_to_json(self.to_toml(), self._source())
        return cast(dict[str, Any], json.loads(doc))

    def __getitem__(self, key: str) -> Any:
        """The value at a dotted key as written in the scenario (``sc["flows.0.cc"]``);
        array elements by index. ``KeyError`` if the scenario does not set it."""
        node: Any = self.to_dict()
        for part in key.split("."):
            if isinstance(node, list):
                try:
                    node = node[int(part)]
                except (ValueError, IndexError):
                    raise KeyError(key) from None
            elif isinstance(node, dict) and part in node:
                node = node[part]
            else:
                raise KeyError(key)
        return node

    def save(self, path: PathLike) -> Path:
        """Write :meth:`to_toml` to ``path``. Relative trace paths keep pointing where
        they did only if ``path`` is in the same folder as :attr:`source`."""
        out = Path(path)
        out.write_text(self.to_toml(), encoding="utf-8")
        return out

    # -- running one --------------------------------------------------------------------

    def run(
        self,
        out: PathLike | None = None,
        label: str | None = None,
        *,
        pcap: bool = False,
        series_format: str = "parquet",
        budget: Budget = True,
        progress: Callable[[float, float], object] | None = None,
    ) -> Run:
        """Run the scenario and return its results, kept in memory; with ``out``, also
        write ``summary.json`` and the series there (``flow_series.parquet`` and
        ``link_series.parquet``, or ``.csv`` with ``series_format="csv"``).

        Packet captures are files, so they need ``out``: ``pcap=True`` captures every
        host's packets into ``out/<host>.pcap``, besides the scenario's own
        ``[measure.capture]`` points. Asking for a capture (``pcap=True``, or a
        scenario with ``[measure.capture]``) without ``out`` raises ``ValueError``
        instead of dropping it.

        ``budget`` bounds the memory the run may need: ``True`` (the default, 4 GiB),
        ``False`` (no check), bytes, or a size like ``"8GB"``; a scenario over it raises
        :class:`mobiflow.ScenarioError` naming the key and the estimate, before running.

        The engine runs without holding the GIL and checks for signals every 50 ms of
        wall time: Ctrl-C (``KeyboardInterrupt``) stops it at once, with nothing
        written. ``progress(simulated_s, duration_s)``, if given, is called at the same
        moments; an exception it raises stops the run and is raised here.

        Raises ``RuntimeError`` if the run fails and ``OSError`` if the results cannot
        be written.
        """
        from mobiflow.outputs import Run, check_series_format, convert_series

        fmt = check_series_format(series_format)
        limit = resolve_budget(budget)
        if out is None and pcap:
            raise ValueError("pcap=True needs out=: the capture files are written there")
        if out is None:
            refuse_lost_captures(self.name, self.text, list(self.overrides), self._source())
        out_dir = None if out is None else os.fspath(out)
        summary, series_csv = _mobiflow.run_str_results(
            self.text,
            list(self.overrides),
            out_dir,
            self._source(),
            pcap,
            budget=limit,
            progress=progress,
        )
        if out is not None:
            convert_series(out, fmt)
        return Run(summary, series_csv, out=out, scenario=self, label=label)

    def __repr__(self) -> str:
        name = self._description.get("scenario") if self._description else None
        parts = [repr(name) if name else "unchecked"]
        if self.source is not None:
            parts.append(f"source={os.fspath(self.source)!r}")
        if self.overrides:
            parts.append("set={" + ", ".join(f"{k!r}: {v!r}" for k, v in self.overrides) + "}")
        return f"Scenario({', '.join(parts)})"


def _plain(value: Any) -> Any:
    """``value`` with tuples as lists and paths as strings, ready for JSON."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return value


def link(a: str, b: str, *, name: str | None = None, **settings: Any) -> dict[str, Any]:
    """A ``[[links]]`` entry between nodes ``a`` and ``b``.

    ``settings`` are the link's keys: ``rate`` (``"15Mbps"``, bits per second),
    ``delay`` (one way, ``"265ms"``), ``queue``, ``queue_limit`` (``"100p"`` packets or
    a size), ``outages`` (``[["10s", "20s"]]``), ``rate_schedule``, ``trace``, and
    ``ab`` / ``ba`` for one direction only (``ba={"rate": "2Mbps"}``).
    """
    return _entry(name, {"a": a, "b": b}, settings)


def flow(src: str, dst: str, *, name: str | None = None, **settings: Any) -> dict[str, Any]:
    """A ``[[flows]]`` entry from node ``src`` to node ``dst``.

    ``settings`` are the flow's keys: ``cc`` (``"reno"``, ``"newreno"``, ``"cubic"``),
    ``app`` (``"bulk"`` or ``{"kind": "sized", "size": "1MB"}``), ``reader``
    (``"greedy"`` or ``{"kind": "constant", "rate": "4Mbps"}``), ``start`` and ``stop``
    (times), ``tcp`` (per-flow TCP settings).
    """
    return _entry(name, {"from": src, "to": dst}, settings)


def _entry(name: str | None, ends: dict[str, str], settings: dict[str, Any]) -> dict[str, Any]:
    """A table entry: ``name`` first (when given), then ``ends``, then ``settings``
    (which may set an end again)."""
    entry: dict[str, Any] = {} if name is None else {"name": name}
    return entry | ends | settings
