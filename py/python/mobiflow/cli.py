"""The ``mobiflow`` command line.

::

    mobiflow run SCENARIO.toml [--set KEY=VALUE ...] [--out DIR] [--json] [--pcap]
                 [--format parquet|csv] [--budget SIZE | --no-budget]
    mobiflow validate SCENARIO.toml [--set KEY=VALUE ...] [--json]
    mobiflow plot RUN_DIR|SWEEP_DIR [RUN_DIR ...] [--seed N]
                  [--kind cwnd|seq|throughput|queue|buffer|capacity|all]
                  [--out FILE.png|FILE.svg] [--flow NAME] [--label TEXT ...]
    mobiflow sweep SWEEP.toml [--backend local|ray] [--address ADDR] [--jobs N]
                   [--out DIR] [--no-progress] [--json] [--format parquet|csv]
                   [--budget SIZE | --no-budget]
    mobiflow live [run] SCENARIO.toml [--set KEY=VALUE ...] [--in a|b] [--link NAME]
                  [--report FILE.json] [--duration S] -- COMMAND [ARG ...]
    mobiflow live compare SCENARIO.toml [--cc reno|cubic|bbr] [--set KEY=VALUE ...]
                  [--link NAME] [--capture] [--align-start] [--out DIR] [--json]
    mobiflow live compare --suite full|quick [--out DIR] [--json]
    mobiflow live cleanup
    mobiflow --version
    mobiflow --install-completion    (bash, zsh, fish, PowerShell)

Exit status: 0 on success; 2 for a scenario that is wrong (a bad key or value in the
file or in ``--set``, a malformed ``--set``, a missing file), a bad sweep file, a
folder that holds no run, or a usage error; 1 for any other failure, and for a sweep
in which some run failed; 130 when interrupted (Ctrl-C ends a run within a fraction of
a second and presents nothing partial as a result). A scenario whose estimated memory
exceeds the budget (``--budget``, default 4 GiB; see docs/scenarios.md) is refused with
status 2 before it runs. Errors are one line on stderr, starting with ``error:``. With
``--json``, stdout holds the JSON and nothing else. Runs longer than about 2 s show
their progress (simulated time against the duration) on stderr when stdout and stderr
are terminals.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import click
import typer
from rich.console import Console
from rich.markup import escape as rich_escape
from rich.status import Status
from rich.table import Table
from rich.text import Text
from typer.core import TyperGroup

from mobiflow import _mobiflow, _resources
from mobiflow._mobiflow import ScenarioError

EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

T = TypeVar("T")

app = typer.Typer(
    name="mobiflow",
    help="Deterministic simulation of transport protocols over mobile networks.",
    # --install-completion / --show-completion (bash, zsh, fish, PowerShell).
    add_completion=True,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class CliError(Exception):
    """A failure reported as ``error: MESSAGE`` with exit status ``code``."""

    def __init__(self, message: str, code: int = EXIT_FAILURE) -> None:
        super().__init__(message)
        self.code = code


# --------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------


def parse_sets(items: list[str] | None) -> list[tuple[str, str]]:
    """``["a.b=1", ...]`` -> ``[("a.b", "1"), ...]``; a malformed item is a usage error."""
    pairs: list[tuple[str, str]] = []
    for item in items or []:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise CliError(
                f'--set "{item}": expected KEY=VALUE, like --set flows.0.cc=cubic',
                EXIT_USAGE,
            )
        pairs.append((key, value.strip()))
    return pairs


def check_scenario_file(path: Path) -> str:
    """The path as text, after checking that it names a readable file: a file here or,
    failing that, one of the shipped scenarios (``mobiflow run examples/outage.toml``
    works from any directory)."""
    if not path.exists():
        shipped = _resources.shipped_scenario(path)
        if shipped is not None:
            return os.fspath(shipped)
        raise CliError(
            f"{path}: no such file (nor a shipped scenario under {_resources.SCENARIOS})",
            EXIT_USAGE,
        )
    if not path.is_file():
        raise CliError(f"{path}: not a file", EXIT_USAGE)
    return os.fspath(path)


def _interrupted() -> NoReturn:
    """Leave at once and quietly with status 130.

    The engine may still be running in its worker thread without the GIL; it cannot be
    stopped from Python, so the process ends without waiting for it. Output files are
    written under temporary names and renamed, so none is left half written.
    """
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # nothing left to report to
            stream.flush()
    os._exit(EXIT_INTERRUPTED)


class RunProgress:
    """The simulated time a running engine last reported (its ``progress`` callable,
    called from the worker thread every 50 ms of wall time)."""

    def __init__(self) -> None:
        self.now_s = 0.0
        self.duration_s = 0.0

    def __call__(self, now_s: float, duration_s: float) -> None:
        self.now_s, self.duration_s = now_s, duration_s


# A run shows its progress once it has taken this long (wall seconds).
PROGRESS_AFTER_S = 2.0


def _progress_wanted() -> bool:
    """Progress is drawn on stderr, and only when a person is watching: stdout and
    stderr both terminals."""
    return sys.stdout.isatty() and sys.stderr.isatty()


def call_engine(fn: Callable[[], T], progress: RunProgress | None = None) -> T:
    """Run ``fn`` (an engine call that releases the GIL) in a worker thread, so that
    Ctrl-C reaches the main thread at once instead of when the run ends.

    With ``progress`` (the callable handed to the engine), a run that lasts longer than
    :data:`PROGRESS_AFTER_S` shows a bar of simulated time against the duration on
    stderr, if :func:`_progress_wanted`; it is erased when the run ends."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    result: list[T] = []
    error: list[BaseException] = []

    def work() -> None:
        try:
            result.append(fn())
        except BaseException as e:  # noqa: BLE001 - handed to the main thread
            error.append(e)

    worker = threading.Thread(target=work, name="mobiflow-engine", daemon=True)
    started = time.monotonic()
    bar: Progress | None = None
    try:
        worker.start()
        while worker.is_alive():
            worker.join(0.1)
            if progress is None or not worker.is_alive():
                continue
            if bar is None and time.monotonic() - started > PROGRESS_AFTER_S:
                if not _progress_wanted() or progress.duration_s <= 0:
                    progress = None
                    continue
                bar = Progress(
                    TextColumn("simulated"),
                    BarColumn(),
                    TextColumn("{task.completed:.1f} s of {task.total:.1f} s"),
                    TimeElapsedColumn(),
                    console=Console(stderr=True),
                    transient=True,
                )
                bar.start()
                bar.add_task("run", total=progress.duration_s)
            if bar is not None:
                bar.update(bar.task_ids[0], completed=progress.now_s)
    except KeyboardInterrupt:
        if bar is not None:
            with contextlib.suppress(Exception):
                bar.stop()
        _interrupted()
    if bar is not None:
        bar.stop()
    if error:
        raise error[0]
    return result[0]


def engine_errors(fn: Callable[[], T], progress: RunProgress | None = None) -> T:
    """Call the engine, turning its exceptions into :class:`CliError`."""
    try:
        return call_engine(fn, progress)
    except ScenarioError as e:
        raise CliError(str(e), EXIT_USAGE) from e
    except (RuntimeError, OSError) as e:
        raise CliError(str(e), EXIT_FAILURE) from e


def make_console() -> Console:
    """A console on stdout; wide when stdout is not a terminal (logs, pipes)."""
    width = None if sys.stdout.isatty() or "COLUMNS" in os.environ else 160
    return Console(highlight=False, width=width)


def _mbps(bps: float | None) -> str:
    return "-" if bps is None else f"{bps / 1e6:.3f}"


def _ms(ms: float | None) -> str:
    return "-" if ms is None else f"{ms:.1f}"


def _rate(bps: float) -> str:
    if bps >= 1e6:
        return f"{bps / 1e6:.4g} Mb/s"
    if bps >= 1e3:
        return f"{bps / 1e3:.4g} kb/s"
    return f"{bps:g} b/s"


def _secs(s: float) -> str:
    return f"{s * 1e3:g} ms" if 0 < s < 1 else f"{s:g} s"


# --------------------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------------------


def render_summary(summary: dict[str, Any], console: Console, out: Path | None = None) -> None:
    """Print a run's summary as tables: flows, link directions, assumed parameters."""
    title = Text()
    title.append(str(summary.get("scenario", "?")), style="bold")
    title.append(
        f"  seed {summary.get('seed')}, {summary.get('duration_s', 0):g} s simulated, "
        f"{summary.get('events', 0):,} events, mobiflow {summary.get('mobiflow_version', '?')}"
    )
    console.print(title)

    flows: list[dict[str, Any]] = summary.get("flows", [])
    # Interval columns in the order the summary lists them (first seen first).
    intervals: list[str] = list(dict.fromkeys(n for f in flows for n in f.get("intervals", {})))
    table = Table(title="flows", title_justify="left", show_edge=False, pad_edge=False)
    table.add_column("flow")
    table.add_column("cc")
    table.add_column("goodput\nMb/s", justify="right")
    for name in intervals:
        table.add_column(Text(f"{name}\nMb/s"), justify="right")
    for header in ("retx", "timeouts", "zero\nwindows", "idle RTTs\n/ total"):
        table.add_column(header, justify="right")
    for header in ("RTT min\nms", "RTT mean\nms", "RTT p95\nms"):
        table.add_column(header, justify="right")
    for f in flows:
        row: list[str | Text] = [Text(str(f.get("name", ""))), Text(str(f.get("cc", "")))]
        row.append(_mbps(f.get("goodput_bps")))
        row.extend(_mbps(f.get("intervals", {}).get(name)) for name in intervals)
        row.extend(
            [
                str(f.get("retransmits", "-")),
                str(f.get("timeouts", "-")),
                str(f.get("zero_windows", "-")),
                f"{f.get('idle_rtts', '-')}/{f.get('total_rtts', '-')}",
                _ms(f.get("rtt_min_ms")),
                _ms(f.get("rtt_mean_ms")),
                _ms(f.get("rtt_p95_ms")),
            ]
        )
        table.add_row(*row)
    console.print()
    console.print(table)

    links: list[dict[str, Any]] = summary.get("links", [])
    if links:
        table = Table(
            title="link directions", title_justify="left", show_edge=False, pad_edge=False
        )
        table.add_column("direction")
        for header in ("drops", "outage\nlosses", "max queue\npkts", "mean queue\npkts"):
            table.add_column(header, justify="right")
        for link in links:
            table.add_row(
                Text(str(link.get("name", ""))),
                str(link.get("drops", "-")),
                str(link.get("outage_losses", "-")),
                str(link.get("queue_max_packets", "-")),
                f"{link.get('queue_mean_packets', 0):.2f}",
            )
        console.print()
        console.print(table)

    tfrc = [f for f in flows if f.get("tfrc")]
    if tfrc:
        table = Table(
            title="TFRC / DCCP flows (data packets)",
            title_justify="left",
            show_edge=False,
            pad_edge=False,
        )
        table.add_column("flow")
        for header in (
            "sent",
            "lost",
            "to\noutages",
            "to\nqueues",
            "loss\nevents",
            "X end\nMb/s",
            "p end",
            "freezes",
            "disconnections: lost, unused pkts, restored after s",
        ):
            table.add_column(header, justify="right")
        for f in tfrc:
            t = f["tfrc"]
            discs = "; ".join(
                f"{d['lost']}, {d['unused_packets']:.0f}, "
                + ("-" if d["restored_after_s"] is None else f"{d['restored_after_s']:.2f}")
                for d in t.get("disconnections", [])
            )
            table.add_row(
                Text(str(f.get("name", ""))),
                str(t["packets_sent"]),
                str(t["packets_lost"]),
                str(t["lost_to_outages"]),
                str(t["lost_to_queues"]),
                str(t["loss_events"]),
                _mbps(t["x_bps"]),
                f"{t['p']:.2g}",
                str(t["freezes"]),
                discs or "-",
            )
        console.print()
        console.print(table)

    assumed: dict[str, str] = summary.get("assumed", {})
    if assumed:
        console.print()
        note = Text("assumed (not from a seed document): ", style="dim")
        note.append(", ".join(f"{k} = {v}" for k, v in assumed.items()), style="dim")
        console.print(note)
    if out is not None:
        console.print(Text(f"results written to {out}/", style="dim"))


def _describe_rate(rate: dict[str, Any]) -> str:
    kind = rate.get("kind")
    if kind == "constant":
        return _rate(rate["bps"])
    if kind == "schedule":
        return f"schedule of {len(rate.get('points', []))} rates"
    if kind == "trace":
        return f"trace {rate.get('path')} (mean {_rate(rate.get('mean_bps', 0.0))})"
    return str(kind)


def _describe_delay(delay: dict[str, Any]) -> str:
    if delay.get("kind") == "constant":
        return _secs(delay["s"])
    if delay.get("kind") == "schedule":
        return f"schedule of {len(delay.get('points', []))} delays"
    return str(delay.get("kind"))


def _describe_queue(queue: dict[str, Any]) -> str:
    limit = (
        f"{queue['limit_packets']} pkts"
        if queue.get("limit_packets") is not None
        else f"{queue.get('limit_bytes')} B"
    )
    return f"{queue.get('kind')} {limit}"


def _describe_app(app_: dict[str, Any]) -> str:
    kind = app_.get("kind")
    if kind == "sized":
        return f"sized {app_.get('bytes')} B"
    if kind == "bursts":
        return f"{len(app_.get('bytes', []))} bursts"
    if kind == "on_off":
        return f"on/off {app_.get('burst_bytes')} B every {_secs(app_.get('period_s', 0.0))}"
    return str(kind)


def _describe_reader(reader: dict[str, Any]) -> str:
    kind = reader.get("kind")
    if kind == "constant":
        return f"reads {_rate(reader.get('rate_bps', 0))}"
    if kind == "steps":
        rates = ", ".join(f"{r / 1e6:g}" for r in reader.get("rates_bps", []))
        return f"reads <{rates}> Mb/s, {_secs(reader.get('step_s', 0.0))} each"
    if kind == "sine":
        return (
            f"reads {_rate(reader.get('mean_bps', 0))} "
            f"± {_rate(reader.get('amplitude_bps', 0))} sine"
        )
    return "reads greedily" if kind == "greedy" else str(kind)


def render_description(desc: dict[str, Any], console: Console) -> None:
    """Print a short description of a validated scenario."""
    head = Text()
    head.append(str(desc.get("scenario")), style="bold")
    if desc.get("source"):
        head.append(f" ({desc['source']})")
    head.append(": ok", style="green")
    console.print(head)
    console.print(
        Text(
            f"  {_secs(desc.get('duration_s', 0.0))} simulated, seed {desc.get('seed')}, "
            f"nodes {', '.join(desc.get('nodes', []))}"
        )
    )
    for link in desc.get("links", []):
        dirs = "; ".join(
            f"{d['from']}->{d['to']} {_describe_rate(d['rate'])}, "
            f"{_describe_delay(d['delay'])}, {_describe_queue(d['queue'])}"
            + (f", {len(d['outages_s'])} outages" if d.get("outages_s") else "")
            for d in link.get("dirs", [])
        )
        console.print(Text(f"  link {link.get('name')}: {dirs}"))
    for flow in desc.get("flows", []):
        transport = flow.get("transport", {})
        proto = transport.get("protocol", "?")
        cc = f" {transport['cc']}" if "cc" in transport else ""
        stop = f" to {_secs(flow['stop_s'])}" if flow.get("stop_s") is not None else ""
        console.print(
            Text(
                f"  flow {flow.get('name')}: {proto}{cc}, {flow.get('src')} -> {flow.get('dst')}, "
                f"from {_secs(flow.get('start_s', 0.0))}{stop}, "
                f"{_describe_app(flow.get('app', {}))}, {_describe_reader(flow.get('reader', {}))}"
            )
        )
    intervals = desc.get("intervals", [])
    if intervals:
        spans = ", ".join(
            f"{i['name']} [{_secs(i['start_s'])}, {_secs(i['end_s'])})" for i in intervals
        )
        console.print(Text(f"  intervals: {spans}"))
    assumed: dict[str, str] = desc.get("assumed", {})
    if assumed:
        console.print(
            Text(
                "  assumed: " + ", ".join(f"{k} = {v}" for k, v in assumed.items()),
                style="dim",
            )
        )


# --------------------------------------------------------------------------------------
# Commands
# --------------------------------------------------------------------------------------

ScenarioArg = Annotated[
    Path,
    typer.Argument(
        metavar="SCENARIO.toml",
        help="Scenario file (see docs/scenarios.md).",
        show_default=False,
    ),
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        "-s",
        metavar="KEY=VALUE",
        help="Override a value by dotted key, e.g. --set flows.0.cc=cubic (repeatable).",
        show_default=False,
    ),
]


def _version_callback(value: bool) -> None:
    if value:
        sys.stdout.write(f"mobiflow {_mobiflow.version()}\n")
        raise typer.Exit()


VersionOpt = Annotated[
    bool,
    typer.Option(
        "--version", help="Print the version and exit.", callback=_version_callback, is_eager=True
    ),
]
"""``--version``, the same on every command group."""


@app.callback()
def _root(
    version: VersionOpt = False,
) -> None:
    """Deterministic simulation of transport protocols over mobile networks."""


FormatOpt = Annotated[
    str,
    typer.Option(
        "--format",
        metavar="parquet|csv",
        help="File format of the series (and a sweep's tables): parquet (default) or csv.",
    ),
]


BudgetOpt = Annotated[
    str | None,
    typer.Option(
        "--budget",
        metavar="SIZE",
        help="Refuse a run whose estimated memory exceeds SIZE (default 4GB; "
        "see docs/scenarios.md, Resource budgets).",
        show_default=False,
    ),
]
NoBudgetOpt = Annotated[
    bool,
    typer.Option("--no-budget", help="Do not check the run's estimated memory."),
]


def _budget(budget: str | None, no_budget: bool) -> int | None:
    """The budget in bytes from ``--budget`` / ``--no-budget`` (``None``: no check)."""
    if no_budget:
        if budget is not None:
            raise CliError("--budget and --no-budget exclude each other", EXIT_USAGE)
        return None
    if budget is None:
        return _mobiflow.default_budget()
    try:
        return _mobiflow.parse_size(budget.strip())
    except ValueError as e:
        raise CliError(f"--budget: {e}", EXIT_USAGE) from e


def _check_format(fmt: str) -> str:
    if fmt not in ("parquet", "csv"):
        raise CliError(f"--format {fmt}: expected parquet or csv", EXIT_USAGE)
    return fmt


@app.command("run")
def run_command(
    scenario: ScenarioArg,
    set_: SetOpt = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            metavar="DIR",
            help="Write summary.json and the flow, tcp, tfrc and link series "
            "(<kind>_series.parquet, or .csv, see --format) into DIR.",
            show_default=False,
        ),
    ] = None,
    json_: Annotated[
        bool,
        typer.Option("--json", help="Print the summary JSON (only) on stdout."),
    ] = False,
    pcap: Annotated[
        bool,
        typer.Option(
            "--pcap",
            help="Capture every host's packets into DIR/<host>.pcap (needs --out).",
        ),
    ] = False,
    series_format: FormatOpt = "parquet",
    budget: BudgetOpt = None,
    no_budget: NoBudgetOpt = False,
) -> None:
    """Run a scenario and print its summary (goodput in Mb/s, RTTs in ms)."""
    from mobiflow.outputs import convert_series

    overrides = parse_sets(set_)
    path = check_scenario_file(scenario)
    fmt = _check_format(series_format)
    limit = _budget(budget, no_budget)
    if pcap and out is None:
        raise CliError("--pcap needs --out DIR for the capture files", EXIT_USAGE)
    if out is None:
        from mobiflow.api import refuse_lost_captures

        try:
            text = Path(path).read_text(encoding="utf-8")
            refuse_lost_captures(path, text, overrides, Path(path), "give --out DIR")
        except ValueError as e:
            raise CliError(str(e), EXIT_USAGE) from e
    out_dir = None if out is None else os.fspath(out)
    progress = RunProgress()
    text = engine_errors(
        lambda: _mobiflow.run_file(path, overrides, out_dir, pcap, budget=limit, progress=progress),
        progress,
    )
    if out is not None:
        convert_series(out, fmt)
    if json_:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()
        return
    render_summary(json.loads(text), make_console(), out)


@app.command("validate")
def validate_command(
    scenario: ScenarioArg,
    set_: SetOpt = None,
    json_: Annotated[
        bool,
        typer.Option("--json", help="Print the description as JSON (only) on stdout."),
    ] = False,
) -> None:
    """Check a scenario without running it and describe it."""
    overrides = parse_sets(set_)
    path = check_scenario_file(scenario)
    text = engine_errors(lambda: _mobiflow.validate_file(path, overrides))
    if json_:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    render_description(json.loads(text), make_console())


@app.command("plot")
def plot_command(
    run_dirs: Annotated[
        list[Path],
        typer.Argument(
            metavar="RUN_DIR...",
            help="Results folders (mobiflow run --out, or a sweep's run folders); "
            "several are drawn on one figure. A sweep's folder draws one run per grid "
            "point, labelled by its grid values.",
            show_default=False,
        ),
    ],
    kind: Annotated[
        str,
        typer.Option(
            "--kind",
            "-k",
            metavar="KIND",
            help="cwnd (cwnd, ssthresh, rwnd), seq (time-sequence), throughput, queue, "
            "buffer (receive buffer), capacity (the link's capacity shaded under "
            "goodput), or all.",
        ),
    ] = "all",
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            metavar="FILE",
            help="Figure file, .png or .svg (or .pdf). Default: RUN_DIR/KIND.png for one "
            "folder, compare-KIND.png for several.",
            show_default=False,
        ),
    ] = None,
    flow: Annotated[
        str | None,
        typer.Option("--flow", "-f", metavar="NAME", help="Draw this flow only (name or index)."),
    ] = None,
    label: Annotated[
        list[str] | None,
        typer.Option(
            "--label",
            "-l",
            metavar="TEXT",
            help="Legend label of each folder, in order (repeat once per folder).",
            show_default=False,
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed",
            metavar="N",
            help="For a sweep's folder: draw the runs of this seed (default: the first).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Draw a figure of one or several runs, or of a sweep (PNG or SVG)."""
    from mobiflow import plot as plots
    from mobiflow.outputs import Run
    from mobiflow.sweeps import SWEEP_FILE

    if kind not in plots.KINDS:
        raise CliError(
            f"--kind {kind}: unknown figure; expected one of {', '.join(plots.KINDS)}",
            EXIT_USAGE,
        )
    runs = []
    for folder in run_dirs:
        if not folder.is_dir():
            raise CliError(f"{folder}: no such folder", EXIT_USAGE)
        if (folder / SWEEP_FILE).is_file():
            runs.extend(sweep_runs(folder, seed))
            continue
        try:
            runs.append(Run.load(folder, label=folder.name if len(run_dirs) > 1 else None))
        except FileNotFoundError as e:
            raise CliError(str(e), EXIT_USAGE) from e
    if out is None:
        out = run_dirs[0] / f"{kind}.png" if len(run_dirs) == 1 else Path(f"compare-{kind}.png")
    if out.suffix.lower() not in plots.FORMATS:
        raise CliError(
            f"--out {out}: unknown figure type; use one of {', '.join(plots.FORMATS)}",
            EXIT_USAGE,
        )
    options: dict[str, Any] = {"labels": label}
    if flow is not None:
        options["flow"] = int(flow) if flow.isdigit() else flow
    try:
        plots.plot(runs, kind, path=out, **options)
    except ValueError as e:  # an unknown flow, a wrong number of labels
        raise CliError(str(e), EXIT_USAGE) from e
    except ImportError as e:
        raise CliError(str(e), EXIT_FAILURE) from e
    sys.stdout.write(f"figure written to {out}\n")


def sweep_runs(folder: Path, seed: int | None = None) -> list[Any]:
    """The finished runs of the sweep in ``folder`` for ``seed`` (default: the sweep's
    first), one per grid point, labelled by the grid values that vary (``cc=cubic,
    rcv_buf=64KB``: the last part of each dotted key)."""
    from mobiflow.sweeps import load_sweep

    result = load_sweep(folder)
    chosen = result.seeds[0] if seed is None else seed
    if chosen not in result.seeds:
        raise CliError(
            f"--seed {chosen}: {folder} ran seeds {', '.join(map(str, result.seeds))}",
            EXIT_USAGE,
        )
    varying = [k for k, values in result.grid.items() if len(values) > 1] or list(result.grid)
    runs = []
    for record in result.done:
        if record.seed != chosen:
            continue
        run = record.load()
        label = ", ".join(f"{k.rsplit('.', 1)[-1]}={record.point[k]}" for k in varying)
        run.label = label or f"seed={record.seed}"
        runs.append(run)
    if not runs:
        raise CliError(f"{folder}: no finished run of seed {chosen} to draw", EXIT_USAGE)
    return runs


def _metric_cell(name: str, mean: float | None, low: float | None, high: float | None) -> str:
    """``mean ± half-width`` in the unit a table shows: Mb/s for rates, ms, counts."""
    if mean is None:
        return "-"
    scale, fmt = (1e6, "{:.3f}") if name.endswith("_bps") else (1.0, "{:.4g}")
    if name.endswith("_ms"):
        fmt = "{:.1f}"
    text = fmt.format(mean / scale)
    if low is not None and high is not None:
        text += " ± " + fmt.format((high - low) / 2 / scale)
    return text


def _metric_header(name: str) -> str:
    if name.endswith("_bps"):
        return f"{name[: -len('_bps')]}\nMb/s"
    if name.endswith("_ms"):
        return f"{name[: -len('_ms')]}\nms"
    if name.endswith("_s"):
        return f"{name[: -len('_s')]}\ns"
    return name


DEFAULT_SWEEP_METRICS = ("goodput_bps", "retransmits", "timeouts", "rtt_mean_ms")
"""What ``mobiflow sweep`` shows when the sweep file lists no ``metrics``."""


def render_sweep(result: Any, metrics: list[str], console: Console, confidence: float) -> None:
    """Print a sweep's means and confidence intervals per grid point and flow; where
    the seeds gave identical runs, the mean alone and a note saying so."""
    agg = result.aggregate(metrics, confidence)
    identical = bool(agg.height) and bool(agg["seeds_identical"].all())
    title = (
        "means across seeds (the seeds gave identical runs: no interval)"
        if identical
        else f"means ± half-width of the {confidence:.0%} confidence interval across seeds"
    )
    table = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    keys = [*result.grid, "flow"]
    for key in keys:
        table.add_column(Text(key))
    table.add_column("seeds", justify="right")
    for m in metrics:
        table.add_column(Text(_metric_header(m)), justify="right")
    for row in agg.iter_rows(named=True):
        cells = [Text(str(row.get(k))) for k in keys] + [
            Text(f"{row['n']} (identical)" if row["seeds_identical"] else str(row["n"]))
        ]
        cells += [
            Text(
                _metric_cell(
                    m, row.get(f"{m}_mean"), row.get(f"{m}_ci_low"), row.get(f"{m}_ci_high")
                )
            )
            for m in metrics
        ]
        table.add_row(*cells)
    console.print(table)
    if identical:
        console.print(
            Text(
                f"note: the {len(result.seeds)} seeds change nothing in this scenario (it has "
                "no random element, such as a link's loss): every seed gave the same run, "
                "so there is one measurement per grid point, not a sample.",
                style="yellow",
            )
        )


def sweep_json(result: Any, metrics: list[str], confidence: float) -> dict[str, Any]:
    """What ``mobiflow sweep --json`` prints: the runs and the aggregate rows."""
    agg = result.aggregate(metrics, confidence)
    return {
        "out": os.fspath(result.out),
        "grid": result.grid,
        "seeds": result.seeds,
        "seeds_matter": result.seeds_matter(),
        "confidence": confidence,
        "runs": [
            {
                "run": r.key,
                "point": r.point,
                "seed": r.seed,
                "status": r.status,
                "error": r.error,
                "ran": r.ran,
            }
            for r in result.runs
        ],
        "aggregate": agg.to_dicts() if agg.height else [],
    }


@app.command("reproduce")
def reproduce_command(
    targets: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[afc|rsfc|handoff|freeze-dccp|fld|all]...",
            help="Seed documents to reproduce (default: all).",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        Path,
        typer.Option("--out", "-o", metavar="DIR", help="Folder for the report and results."),
    ] = Path("out/reproduce"),
    json_: Annotated[
        bool,
        typer.Option("--json", help="Print the tables' data as JSON on stdout."),
    ] = False,
    quick: Annotated[
        bool,
        typer.Option("--quick", help="Shortened runs (minutes become seconds); indicative only."),
    ] = False,
    no_validation: Annotated[
        bool,
        typer.Option("--no-validation", help="Leave out the ns-2 cross-validation section."),
    ] = False,
    jobs: Annotated[
        int,
        typer.Option("--jobs", "-j", min=1, help="Runs at once within each reproduction."),
    ] = 2,
    no_figures: Annotated[
        bool,
        typer.Option("--no-figures", help="Skip the figures (tables and text only)."),
    ] = False,
    ns2: Annotated[
        str,
        typer.Option(
            "--ns2",
            metavar="auto|yes|no",
            help="Run the reproductions' ns-2 twins (auto: when `ns` is installed; "
            "--quick turns auto into no).",
        ),
    ] = "auto",
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose", "-v", help="Print every line the reproductions print (their tables)."
        ),
    ] = False,
) -> None:
    """Reproduce the seed documents' results; write OUT/report.html and report.md.

    The console shows where the work is (a status line on a terminal, one line per
    section otherwise) and, at the end, the summary table; the tables themselves are in
    the report (or on the console with --verbose)."""
    from mobiflow.repro import report as repro

    wanted = targets or ["all"]
    unknown = [t for t in wanted if t != "all" and t not in repro.SEEDS]
    if unknown:
        raise CliError(
            f"unknown seed {', '.join(unknown)}; choose from {', '.join(repro.SEEDS)} or all",
            EXIT_USAGE,
        )
    if ns2 not in ("auto", "yes", "no"):
        raise CliError(f"--ns2 {ns2}: choose auto, yes or no", EXIT_USAGE)
    if ns2 == "yes" and not repro.have_ns2():
        raise CliError("--ns2 yes but `ns` is not installed", EXIT_USAGE)
    console = make_console() if not json_ else Console(stderr=True)
    live = console.is_terminal and not verbose
    status = console.status("", spinner="dots") if live else contextlib.nullcontext()
    section = [""]

    def say(msg: str) -> None:
        relayed = msg.startswith("  ")  # a line a reproduction printed, not a new section
        if verbose or (not relayed and not live):
            console.print(f"[dim]{rich_escape(msg)}[/dim]")
        elif not relayed:
            section[0] = msg.rstrip(" …")
        if live and isinstance(status, Status):
            last = msg.strip() if relayed else "starting"
            width = max(20, console.width - len(section[0]) - 8)
            status.update(f"{rich_escape(section[0])}: [dim]{rich_escape(last[:width])}[/dim]")

    with status:
        sections = call_engine(
            lambda: repro.reproduce(
                wanted,
                out,
                quick=quick,
                validation=not no_validation,
                progress=say,
                jobs=jobs,
                figures=not no_figures,
                ns2=ns2,
            )
        )
    if json_:
        sys.stdout.write((out / "results.json").read_text())
        return
    table = Table(title="Reproduction")
    for col in ("section", "status", "time"):
        table.add_column(col)
    for sec in sections:
        table.add_row(sec.seed.title, sec.status, f"{sec.seconds:.0f} s")
    console.print(table)
    console.print(f"report: {out / 'report.html'} (and report.md)")
    if any(sec.status == "failed" for sec in sections):
        raise CliError("some reproductions failed; see the report", EXIT_FAILURE)


@app.command("model")
def model_command(
    which: Annotated[
        str,
        typer.Argument(
            metavar="freeze-dccp",
            help=(
                "The analytical model to print (TFRC under disconnection: Mehani, Boreli and "
                'Ernst, "Analysis of TFRC in Disconnected Scenarios and Performance '
                'Improvements with Freeze-DCCP", ACM MobiArch 2009).'
            ),
            show_default=False,
        ),
    ],
    json_: Annotated[
        bool, typer.Option("--json", help="Print every quantity as JSON instead.")
    ] = False,
) -> None:
    """Print a seed's analytical model beside the seed's numbers.

    freeze-dccp: the table "Analytically-Derived Possible Performance Improvements"
    (equations (1)-(3), 500-byte packets) from the seed's link characteristics and
    handoff times, each cell as seed / mobiflow, then the (R, X_d) each row of the
    seed's losses table implies."""
    from mobiflow import _mobiflow

    if which != "freeze-dccp":
        raise CliError(f"unknown model {which!r}; choose freeze-dccp", EXIT_USAGE)
    text = _mobiflow.freeze_dccp_model()
    if json_:
        sys.stdout.write(text + "\n")
        return
    model = json.loads(text)
    out = [model["slides"]["text"].rstrip()]
    out.append(f"{model['slides']['matching_cells']} of 32 cells match the seed.")
    out.append("")
    out.append("R and X_d that make equation (1) give each row of the seed's losses table:")
    out.append(
        f"{'from':>9} {'R fit (s)':>10} {'R slides':>9} {'X_d fit (Mb/s)':>15} "
        f"{'link (Mb/s)':>12}  (1) at the fit / seed"
    )
    for tech, fit, link, paper in zip(
        model["technologies"],
        model["fits"],
        model["links"],
        model["paper"]["losses"],
        strict=True,
    ):
        out.append(
            f"{tech:>9} {fit['r_s']:>10.3f} {link['rtt_s']:>9.3f} "
            f"{fit['x_d_bps'] / 1e6:>15.3f} {link['bandwidth_bps'] / 1e6:>12.3f}  "
            f"{fit['values']} / {[round(v) for v in paper]}"
        )
    sys.stdout.write("\n".join(out) + "\n")


@app.command("sweep")
def sweep_command(
    sweep_file: Annotated[
        Path,
        typer.Argument(
            metavar="SWEEP.toml",
            help="Sweep file: scenario, \\[grid] of dotted keys to lists, seeds, out "
            "(see docs/python.md).",
            show_default=False,
        ),
    ],
    backend: Annotated[
        str,
        typer.Option("--backend", "-b", metavar="local|ray", help="Where the runs run."),
    ] = "local",
    address: Annotated[
        str | None,
        typer.Option(
            "--address",
            metavar="ADDR",
            help="Ray cluster to use (e.g. ray://head:10001 or auto); default: a local "
            "Ray instance.",
            show_default=False,
        ),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs",
            "-j",
            metavar="N",
            help="Runs at once (default: every core).",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            metavar="DIR",
            help="Sweep folder (default: the file's `out`, else runs/<file name>).",
            show_default=False,
        ),
    ] = None,
    no_progress: Annotated[
        bool, typer.Option("--no-progress", help="No progress bar (on stderr).")
    ] = False,
    json_: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print the runs and the per-grid-point means and intervals as JSON "
            "(only) on stdout.",
        ),
    ] = False,
    table_format: FormatOpt = "parquet",
    budget: BudgetOpt = None,
    no_budget: NoBudgetOpt = False,
) -> None:
    """Run a scenario over a grid of values and seeds; resume where a sweep stopped.

    Every run is checked against the memory budget before the first one starts."""
    from mobiflow import sweeps
    from mobiflow.scenario import Scenario

    if backend not in ("local", "ray"):
        raise CliError(f"--backend {backend}: expected local or ray", EXIT_USAGE)
    if jobs is not None and jobs < 1:
        raise CliError(f"--jobs {jobs}: expected at least 1", EXIT_USAGE)
    fmt = _check_format(table_format)
    limit = _budget(budget, no_budget)
    try:
        spec = sweeps.load_spec(sweep_file)
        if not spec.scenario.is_file():
            raise CliError(f"{sweep_file}: scenario: {spec.scenario}: no such file", EXIT_USAGE)
        scenario = Scenario.load(spec.scenario)
        metrics = spec.metrics or list(DEFAULT_SWEEP_METRICS)
        folder = out or spec.out or Path("runs") / sweep_file.stem
        result = sweeps.sweep(
            scenario,
            spec.grid,
            spec.seeds,
            out=folder,
            backend="ray" if backend == "ray" else "local",
            jobs=jobs,
            address=address,
            progress=not no_progress and not json_,
            series_format=fmt,
            budget=False if limit is None else limit,
        )
    except (ScenarioError, sweeps.SweepError) as e:
        raise CliError(str(e), EXIT_USAGE) from e
    except KeyboardInterrupt:
        sys.stderr.write("interrupted: finished runs are stored; run the same command to resume\n")
        _interrupted()
    console = make_console()
    try:
        results_csv, summary_csv = result.write_tables(metrics, fmt)
        if json_:
            sys.stdout.write(json.dumps(sweep_json(result, metrics, 0.95), default=str) + "\n")
        elif result.done:
            render_sweep(result, metrics, console, 0.95)
    except sweeps.SweepError as e:  # an unknown metric: the runs are stored all the same
        raise CliError(
            f"{sweep_file}: metrics: {e} (the runs are stored: fix the file and run the "
            "same command, nothing is run again)",
            EXIT_USAGE,
        ) from e
    if json_:
        console = Console(stderr=True)
    console.print(
        Text(
            f"{len(result.runs)} runs: {result.ran - len(result.failed)} finished now, "
            f"{result.skipped} already done, {len(result.failed)} failed, "
            f"in {result.seconds:.1f} s; "
            f"results in {result.out}/ ({results_csv.name}, {summary_csv.name}, "
            f"series.{fmt})",
            style="dim",
        )
    )
    if result.failed:
        for record in result.failed:
            sys.stderr.write(f"failed: {record.dir}: {record.error}\n")
        raise CliError(
            f"{len(result.failed)} of {len(result.runs)} runs failed; "
            "run the same command again to retry them",
            EXIT_FAILURE,
        )


# --------------------------------------------------------------------------------------
# live: real Linux TCP through the scenario's link, emulated in real time
# --------------------------------------------------------------------------------------


class _LiveGroup(TyperGroup):
    """``mobiflow live``: its subcommands ``run`` and ``compare``, with ``run`` the
    default, so that ``mobiflow live SCENARIO -- COMMAND`` means ``mobiflow live run
    SCENARIO -- COMMAND``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        first = args[0] if args else None
        if first is not None and first not in self.commands and not first.startswith("-"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


live_app = typer.Typer(
    name="live",
    cls=_LiveGroup,
    help="Real Linux TCP through the scenario's link, emulated in real time (needs root "
    "and /dev/net/tun: exit status 2 otherwise; see docs/live.md).\n\n"
    "`mobiflow live SCENARIO -- COMMAND` is `mobiflow live run SCENARIO -- COMMAND`.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(live_app)

LinkOpt = Annotated[
    str | None,
    typer.Option(
        "--link",
        metavar="NAME",
        help="The link to emulate (default: the scenario's only link, or the one its flows cross).",
        show_default=False,
    ),
]


@live_app.callback()
def _live_root(
    version: VersionOpt = False,
) -> None:
    """Real Linux TCP through the scenario's link, emulated in real time."""


@live_app.command("run")
def live_run_command(
    scenario: ScenarioArg,
    command: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[-- COMMAND [ARG ...]]",
            help="The command to run in the namespace behind the link (after --).",
            show_default=False,
        ),
    ] = None,
    set_: SetOpt = None,
    side: Annotated[
        str,
        typer.Option(
            "--in",
            metavar="a|b",
            help="The end of the link whose namespace runs COMMAND (the a end is at "
            "10.200.0.1, the b end at 10.200.0.2).",
        ),
    ] = "b",
    link: LinkOpt = None,
    report: Annotated[
        Path | None,
        typer.Option(
            "--report",
            metavar="FILE.json",
            help="Write the link's counters and the command's status as JSON.",
            show_default=False,
        ),
    ] = None,
    duration: Annotated[
        float | None,
        typer.Option(
            "--duration",
            metavar="S",
            help="Stop after S seconds (with or without a COMMAND).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Run COMMAND behind the scenario's link, emulated in real time.

    COMMAND runs in a network namespace; the link's delivered rate, queue and drops are
    printed every second."""
    from mobiflow import live

    if side not in ("a", "b"):
        raise CliError(f"--in {side}: expected a or b", EXIT_USAGE)
    if duration is not None and not duration > 0:
        raise CliError(f"--duration {duration}: expected a number of seconds > 0", EXIT_USAGE)
    sets = parse_sets(set_)
    path = check_scenario_file(scenario)
    engine_errors(lambda: _mobiflow.validate_file(path, sets))
    rest = list(command or [])
    if not rest and not duration:
        raise CliError(
            "give a COMMAND after -- or a --duration (mobiflow live run --help)", EXIT_USAGE
        )
    extra: list[str] = []
    if link:
        extra += ["--link", link]
    if duration:
        extra += ["--duration", str(duration)]
    try:
        code = live.run_command(path, rest, sets, side, report, extra)
    except live.LiveUnavailable as e:
        raise CliError(str(e), EXIT_USAGE) from e
    except KeyboardInterrupt:
        # The emulator has stopped and removed its namespaces (live.run_emulator);
        # leave at once (Typer would turn this into a slow SystemExit(130)).
        _interrupted()
    if code:
        raise SystemExit(code)


@live_app.command("cleanup")
def live_cleanup_command() -> None:
    """Remove the namespaces (mf-PID-a, mf-PID-b) and devices of live runs whose
    emulator is no longer running, and what still runs inside them. Every live run
    does this when it starts."""
    from mobiflow import live

    try:
        sys.stdout.write(live.cleanup() + "\n")
    except live.LiveUnavailable as e:
        raise CliError(str(e), EXIT_USAGE) from e


@live_app.command("compare")
def live_compare_command(
    scenario: Annotated[
        Path | None,
        typer.Argument(
            metavar="SCENARIO.toml",
            help="Scenario file (see docs/scenarios.md); none with --suite.",
            show_default=False,
        ),
    ] = None,
    cc: Annotated[
        str | None,
        typer.Option(
            "--cc",
            metavar="reno|cubic|bbr",
            help="The kernel's congestion control (default: the scenario's flows').",
            show_default=False,
        ),
    ] = None,
    set_: SetOpt = None,
    link: LinkOpt = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            metavar="DIR",
            help="Results folder (both runs, the table, the figure).",
            show_default=False,
        ),
    ] = None,
    json_: Annotated[
        bool,
        typer.Option("--json", help="Print the comparison as JSON (only) on stdout."),
    ] = False,
    suite: Annotated[
        str | None,
        typer.Option(
            "--suite",
            metavar="full|quick",
            help="Run the validation table of issue 20 instead of one scenario: every "
            "case with reno, cubic and bbr against the simulator's profile linux, each "
            "held to its targets (PASS/MISS); `quick` is CI's short subset. Writes "
            "suite.md and suite.json (default folder out/live/suite/SUITE/).",
            show_default=False,
        ),
    ] = None,
    capture: Annotated[
        bool,
        typer.Option(
            "--capture",
            help="Capture packets at the receiver on both sides (dumpcap on the TUN "
            "device, the simulator's [measure.capture]) and count spurious "
            "retransmissions with tshark.",
        ),
    ] = False,
    align_start: Annotated[
        bool,
        typer.Option(
            "--align-start",
            help="Start the simulated flows when the kernel's flows sent their SYNs (~0.6 s "
            "late) and measure both from there.",
        ),
    ] = False,
) -> None:
    """Linux TCP through the emulated link side by side with the simulator.

    The scenario's bulk TCP flows run through the emulated link with the kernel's TCP
    set like the scenario's, and the same scenario runs in the simulator; the table
    gives goodput per interval, RTT, retransmissions and RTOs, with a figure of cwnd
    and srtt. With --suite, the validation table of issue 20 (docs/live.md)."""
    from mobiflow import live

    if suite is not None:
        _live_suite(suite, scenario, cc, set_, link, out, json_)
        return
    if scenario is None:
        raise CliError("give a SCENARIO.toml or --suite full|quick", EXIT_USAGE)
    if cc is not None and cc not in live.CCS:
        raise CliError(f"--cc {cc}: expected {', '.join(live.CCS)}", EXIT_USAGE)
    sets = parse_sets(set_)
    path = check_scenario_file(scenario)
    try:
        cmp = live.compare(
            path, cc=cc, sets=sets, out=out, link=link, capture=capture, align_start=align_start
        )
    except live.LiveUnavailable as e:
        raise CliError(str(e), EXIT_USAGE) from e
    except KeyboardInterrupt:
        _interrupted()
    except ScenarioError as e:
        raise CliError(str(e), EXIT_USAGE) from e
    except ValueError as e:
        raise CliError(f"{path}: {e}", EXIT_USAGE) from e
    except RuntimeError as e:
        raise CliError(str(e), EXIT_FAILURE) from e
    if json_:
        sys.stdout.write(json.dumps(cmp.to_json(), indent=1) + "\n")
    else:
        render_live_comparison(cmp, make_console())


def _live_suite(
    suite: str,
    scenario: Path | None,
    cc: str | None,
    set_: list[str] | None,
    link: str | None,
    out: Path | None,
    json_: bool,
) -> None:
    """``mobiflow live compare --suite SUITE``: the table, printed and written."""
    from mobiflow import live, livesuite

    if suite not in livesuite.SUITES:
        raise CliError(f"--suite {suite}: expected {'|'.join(livesuite.SUITES)}", EXIT_USAGE)
    given = [
        name
        for name, v in (
            ("SCENARIO.toml", scenario),
            ("--cc", cc),
            ("--set", set_),
            ("--link", link),
        )
        if v
    ]
    if given:
        raise CliError(f"--suite sets its own cases: drop {', '.join(given)}", EXIT_USAGE)
    try:
        result = livesuite.run_suite(suite, out=out)
    except (live.LiveUnavailable, ValueError) as e:
        raise CliError(str(e), EXIT_USAGE) from e
    except KeyboardInterrupt:
        _interrupted()
    if json_:
        sys.stdout.write(json.dumps(result.to_json(), indent=1) + "\n")
    else:
        render_live_suite(result, make_console())
    if any(r.error is not None for r in result.rows):
        raise CliError("some cases failed (their rows say why)", EXIT_FAILURE)


def render_live_suite(result: Any, console: Console) -> None:
    """The table of ``mobiflow live compare --suite``: Linux / simulator per cell."""
    from mobiflow import livesuite

    table = Table(
        title=f"live suite {result.suite} ({result.date}, {result.commit}): "
        "Linux / simulator (profile linux)"
    )
    for col in ("case", "cc", *livesuite.COLUMNS, "verdict"):
        table.add_column(col)
    for r in result.rows:
        cells = ["-"] * len(livesuite.COLUMNS) if r.error else livesuite.row_cells(r)
        verdict = r.verdict
        if r.misses:
            verdict += ": " + ", ".join(r.misses)
        if r.error:
            verdict += ": " + r.error
        if not r.error and not r.valid:
            verdict += " (INVALID run)"
        table.add_row(r.case, r.cc, *cells, verdict)
    console.print(table)
    for r in result.rows:
        for reason in r.invalid_reasons:
            console.print(f"[red]{r.case} {r.cc}: live run INVALID: {reason}[/red]")
        if r.sim_error:
            console.print(f"{r.case} {r.cc}: {r.sim_error}")
    console.print(f"table: {result.out / 'suite.md'}, {result.out / 'suite.json'}")


def render_live_comparison(cmp: Any, console: Console) -> None:
    """The side-by-side table of ``mobiflow live compare``."""
    table = Table(
        title=f"{cmp.scenario}, {cmp.cc}: Linux TCP through the emulated link vs the simulator"
    )
    for col, just in (
        ("flow", "left"),
        ("metric", "left"),
        ("Linux", "right"),
        ("simulator", "right"),
        ("difference", "right"),
    ):
        table.add_column(col, justify=just)  # type: ignore[arg-type]

    def cell(v: float | None) -> str:
        return "-" if v is None else f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"

    if cmp.sim_error is not None:
        console.print(f"[yellow]{cmp.sim_error}: the simulator column is empty[/yellow]")
    for flow, metric, k, s in cmp.rows:
        diff = "-"
        if k is not None and s is not None and s != 0:
            diff = f"{(k - s) / abs(s) * 100:+.0f} %"
        table.add_row(flow, metric, cell(k), cell(s), diff)
    console.print(table)
    for n in cmp.notes:
        console.print(f"[dim]{n}[/dim]")
    if cmp.valid:
        console.print("live run: valid (no packet lost outside the emulated link)")
    else:
        for r in cmp.invalid_reasons:
            console.print(f"[red]live run INVALID: {r}[/red]")
    if cmp.figure is not None:
        console.print(f"figure: {cmp.figure}")
    console.print(f"results: {cmp.out}")


# --------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------


def _fail(message: str, code: int) -> NoReturn:
    sys.stdout.flush()
    sys.stderr.write(f"error: {message}\n")
    sys.stderr.flush()
    raise SystemExit(code)


def main(argv: list[str] | None = None) -> None:
    """Console script ``mobiflow``: parse ``argv`` (default ``sys.argv[1:]``) and run.

    Never shows a traceback for expected failures; set ``MOBIFLOW_DEBUG=1`` to see one
    for unexpected failures.
    """
    args = sys.argv[1:] if argv is None else argv
    try:
        app(args=args, prog_name="mobiflow")
    except CliError as e:
        _fail(str(e), e.code)
    except KeyboardInterrupt:
        _interrupted()
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001 - the last line of defence
        if os.environ.get("MOBIFLOW_DEBUG"):
            traceback.print_exc()
        _fail(f"{type(e).__name__}: {e}", EXIT_FAILURE)


if __name__ == "__main__":
    main()
