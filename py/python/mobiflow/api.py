"""The Python API: check and run scenarios, read their results.

A scenario is a TOML file (see ``docs/scenarios.md``). Overrides replace values in it
by dotted key, like ``--set`` on the command line::

    import mobiflow

    summary = mobiflow.run(
        "scenarios/examples/rwnd_limited.toml",
        set={"seed": 2, "flows.0.reader.rate": "6Mbps"},
        out="out/rwnd",
    )
    for flow in summary["flows"]:
        print(flow["name"], flow["goodput_bps"] / 1e6, "Mb/s")

Units follow the engine: keys ending in ``_bps`` are bits per second, ``_s`` seconds,
``_ms`` milliseconds, ``bytes`` bytes, ``packets`` packets. Goodput is payload only.
A run is a pure function of its scenario (including ``seed``): the same input gives the
same bytes out.

The engine runs without the GIL: threads may run several scenarios at once.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from mobiflow import _mobiflow
from mobiflow.results import Summary

if TYPE_CHECKING:
    import polars as pl

__all__ = [
    "Budget",
    "Overrides",
    "PathLike",
    "read_series",
    "read_summary",
    "resolve_budget",
    "run",
    "run_json",
    "run_text",
    "to_overrides",
    "validate",
    "validate_text",
]

PathLike = str | os.PathLike[str]
"""A file system path."""

Overrides = Mapping[str, object] | Iterable[tuple[str, object]]
"""``{dotted key: value}`` or ``[(dotted key, value), ...]``, applied in order."""

Budget = bool | int | str
"""A run's memory budget: ``True`` for the default (4 GiB), ``False`` for no check, a
number of bytes, or a size like ``"8GB"`` (K, M, G are multiples of 1024). A scenario
whose estimate exceeds it is refused before it runs (see ``docs/scenarios.md``,
"Resource budgets")."""


def resolve_budget(budget: Budget) -> int | None:
    """The budget in bytes, or ``None`` for no check. Raises ``ValueError`` for a size
    that does not parse or a negative number."""
    if budget is True:
        return _mobiflow.default_budget()
    if budget is False:
        return None
    if isinstance(budget, int):
        if budget < 0:
            raise ValueError(f"budget {budget}: a number of bytes must not be negative")
        return budget
    if isinstance(budget, str):
        return _mobiflow.parse_size(budget.strip())
    raise ValueError(
        f"budget {budget!r}: expected True, False, a number of bytes or a size like '8GB'"
    )


SUMMARY_FILE = "summary.json"
FLOW_SERIES_FILE = "flow_series.csv"
TCP_SERIES_FILE = "tcp_series.csv"
TFRC_SERIES_FILE = "tfrc_series.csv"
LINK_SERIES_FILE = "link_series.csv"
SERIES_KINDS = ("flow", "tcp", "tfrc", "link")
"""The series a run writes, ``<kind>_series.parquet`` (or ``.csv``): what every flow
has, what TCP flows have, what TFRC / DCCP flows have, and the link directions'."""


def toml_value(value: object) -> str:
    """Spell a Python value as a TOML value: ``"text"``, ``true``, ``3``, ``0.25``,
    ``[1, "a"]``, ``{ kind = "constant", rate = "4Mbps" }``.

    Raises ``TypeError`` for what TOML cannot hold (``None``, arbitrary objects).
    """
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a TOML basic string
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, os.PathLike):
        return toml_value(os.fspath(value))
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        items = ", ".join(f"{_toml_key(k)} = {toml_value(v)}" for k, v in value.items())
        return "{ " + items + " }" if items else "{}"
    raise TypeError(f"cannot use a {type(value).__name__} as a scenario value: {value!r}")


def _toml_key(key: object) -> str:
    if not isinstance(key, str):
        raise TypeError(f"table keys are strings, got {key!r}")
    bare = key and all(c.isascii() and (c.isalnum() or c in "_-") for c in key)
    return key if bare else json.dumps(key, ensure_ascii=False)


def override_value(value: object) -> str:
    """Spell a Python value as the text of a ``--set KEY=VALUE`` value.

    Strings pass as they are (``"6Mbps"``, ``"265ms"``), so the engine reads them as the
    command line does: as a TOML value if they are one (``"[\"1s\", \"2s\"]"``),
    else as a string. Booleans become ``true`` and ``false``; numbers their shortest
    ``repr``; paths their text; lists, tuples and dicts TOML arrays and inline tables.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, os.PathLike):
        return str(os.fspath(value))
    return toml_value(value)


def to_overrides(set: Overrides | None) -> list[tuple[str, str]]:  # noqa: A002
    """Normalise overrides to the ``[(key, text)]`` list the engine takes."""
    if set is None:
        return []
    items = set.items() if isinstance(set, Mapping) else set
    pairs: list[tuple[str, str]] = []
    for key, value in items:
        if not isinstance(key, str) or not key:
            raise TypeError(f"override keys are dotted key strings, got {key!r}")
        pairs.append((key, override_value(value)))
    return pairs


def _opt_path(path: PathLike | None) -> str | None:
    return None if path is None else os.fspath(path)


def captures_requested(
    text: str, overrides: list[tuple[str, str]], source: PathLike | None = None
) -> bool:
    """Whether a scenario (TOML text, overrides applied) names capture points in
    ``[measure.capture]``. ``False`` if the text cannot be read: the engine then says
    why."""
    try:
        applied = _mobiflow.apply_overrides(text, overrides, _opt_path(source))
        doc = json.loads(_mobiflow.toml_to_json(applied, _opt_path(source)))
    except Exception:  # noqa: BLE001 - the run reports a broken scenario itself
        return False
    measure = doc.get("measure")
    capture = measure.get("capture") if isinstance(measure, dict) else None
    return isinstance(capture, dict) and any(bool(v) for v in capture.values())


def refuse_lost_captures(
    where: str,
    text: str,
    overrides: list[tuple[str, str]],
    source: PathLike | None = None,
    remedy: str = "give out=",
) -> None:
    """``ValueError`` when the scenario asks for packet captures but the run has no
    results folder to write them into (they would be dropped silently)."""
    if captures_requested(text, overrides, source):
        raise ValueError(
            f"{where}: measure.capture asks for packet captures, which are written into "
            f"the results folder: {remedy}, or remove measure.capture"
        )


def run_json(
    path: PathLike,
    set: Overrides | None = None,  # noqa: A002
    out: PathLike | None = None,
    pcap: bool = False,
    series_format: str = "parquet",
    budget: Budget = True,
) -> str:
    """Run the scenario file ``path`` and return its summary as JSON text.

    The text is exactly what ``summary.json`` holds. With ``out``, the folder is created
    if needed and ``summary.json`` and the series (``flow_series``, ``tcp_series``,
    ``tfrc_series``, ``link_series``, each ``.parquet``, or ``.csv`` with
    ``series_format="csv"``) are written into it (other files there are
    left alone), with the pcap files of the scenario's ``[measure.capture]`` points;
    ``pcap=True`` captures at every host too (and needs ``out``).

    ``budget`` bounds the memory the run may need (:data:`Budget`); a scenario over it
    raises :class:`mobiflow.ScenarioError` naming the key and the estimate. Ctrl-C
    raises ``KeyboardInterrupt`` within a fraction of a second and writes nothing.

    Raises :class:`mobiflow.ScenarioError` if the scenario is wrong, ``RuntimeError`` if
    the run fails and ``OSError`` if the results cannot be written.
    """
    from mobiflow.outputs import check_series_format, convert_series

    fmt = check_series_format(series_format)
    if pcap and out is None:
        raise ValueError("pcap=True needs out=: the capture files are written there")
    pairs = to_overrides(set)
    limit = resolve_budget(budget)
    if out is None:
        try:
            source_text = Path(path).read_text(encoding="utf-8")
        except OSError:
            source_text = ""  # the engine says why it cannot read the file
        refuse_lost_captures(os.fspath(path), source_text, pairs, path)
    text = _mobiflow.run_file(os.fspath(path), pairs, _opt_path(out), pcap, budget=limit)
    if out is not None:
        convert_series(out, fmt)
    return text


def run(
    path: PathLike,
    set: Overrides | None = None,  # noqa: A002
    out: PathLike | None = None,
    pcap: bool = False,
    series_format: str = "parquet",
    budget: Budget = True,
) -> Summary:
    """Run the scenario file ``path`` and return its summary (see :func:`run_json`).

    Rates in the summary are bits per second (``goodput_bps``, ``intervals``), times
    seconds (``duration_s``, ``completion_time_s``) or milliseconds (``rtt_*_ms``).
    """
    return cast(
        Summary,
        json.loads(
            run_json(path, set=set, out=out, pcap=pcap, series_format=series_format, budget=budget)
        ),
    )


def run_text(
    text: str,
    set: Overrides | None = None,  # noqa: A002
    out: PathLike | None = None,
    source: PathLike | None = None,
    series_format: str = "parquet",
    budget: Budget = True,
) -> Summary:
    """Run a scenario given as TOML text; ``source`` names the file it stands for
    (messages mention it; relative paths resolve against its folder). ``budget`` as
    for :func:`run_json`."""
    from mobiflow.outputs import check_series_format, convert_series

    fmt = check_series_format(series_format)
    pairs = to_overrides(set)
    limit = resolve_budget(budget)
    if out is None:
        refuse_lost_captures(os.fspath(source or "<scenario text>"), text, pairs, source)
    text_out, _ = _mobiflow.run_str_results(
        text, pairs, _opt_path(out), _opt_path(source), budget=limit, series=False
    )
    if out is not None:
        convert_series(out, fmt)
    return cast(Summary, json.loads(text_out))


def validate(path: PathLike, set: Overrides | None = None) -> dict[str, Any]:  # noqa: A002
    """Check the scenario file ``path`` without running it and describe it.

    The description has the scenario's name, seed, ``duration_s``, nodes, links (per
    direction: rate in bits per second, delay in seconds, queue, outages in seconds),
    flows, measurement intervals and the ``assumed`` parameters. Raises
    :class:`mobiflow.ScenarioError` if the scenario is wrong.
    """
    return cast(
        dict[str, Any], json.loads(_mobiflow.validate_file(os.fspath(path), to_overrides(set)))
    )


def validate_text(
    text: str,
    set: Overrides | None = None,  # noqa: A002
    source: PathLike | None = None,
) -> dict[str, Any]:
    """:func:`validate` for a scenario given as TOML text."""
    return cast(
        dict[str, Any],
        json.loads(_mobiflow.validate_str(text, to_overrides(set), _opt_path(source))),
    )


def read_summary(out: PathLike) -> Summary:
    """Read ``summary.json`` from a results folder written by :func:`run`."""
    return cast(Summary, json.loads((Path(out) / SUMMARY_FILE).read_text(encoding="utf-8")))


def read_series(out: PathLike) -> dict[str, pl.DataFrame]:
    """Read the sampled time series of a results folder as polars DataFrames, from
    ``<kind>_series.parquet`` or their ``.csv`` forms, whichever the folder holds.

    Returns ``{"flow": ..., "tcp": ..., "tfrc": ..., "link": ...}``: what every flow has
    (goodput, read rate, RTT), what TCP flows have (windows, sequence numbers, the
    receive-window policy's estimates), what TFRC / DCCP flows have (X, p, the
    Freeze-DCCP states), and the link directions'. Columns carry their units in their names
    (``time_s`` seconds, ``cwnd_bytes`` bytes, ``srtt_ms`` milliseconds, ``rate_bps``
    bits per second, ...); ``flow`` and ``dir`` name the flow and the link direction,
    ``flow_index`` and ``dir_index`` index ``summary["flows"]`` and
    ``summary["links"]``. Missing values (an RTT before the first sample, a slow-start
    threshold that is still infinite) are null. See :mod:`mobiflow.outputs` for every
    column.
    """
    from mobiflow.outputs import read_series as read

    return read(out)
