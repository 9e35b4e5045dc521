"""What every reproduction shares: its declaration, its options and command line, its
runs on the public API (:class:`mobiflow.Scenario`, :class:`mobiflow.Run`) and the
structured report it returns.

A reproduction module declares one :class:`Reproduction`: its key (the name
``mobiflow reproduce`` takes), its title, what ``--quick`` changes, its optional parts
(each gets a ``--no-PART`` flag) and its own parameters (:class:`Param`), and a
function from :class:`Options` to a :class:`Report`. The report holds the blocks of
the Markdown page (headings, text, :class:`Table`, :class:`Figure`), the data that
``results.json`` keeps, and the claims computed from those data. :func:`main` gives
every reproduction the same command line; :mod:`mobiflow.repro.report` calls
:meth:`Reproduction.reproduce` directly and renders each report under its own section,
its figure links pointing into the reproduction's folder.

Shipped inputs (scenarios, traces, the ns-2 twins) are found through
:mod:`mobiflow._resources`, so a reproduction runs from the wheel as from the tree.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import shutil
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from mobiflow import _resources
from mobiflow.api import PathLike
from mobiflow.scenario import Scenario

if TYPE_CHECKING:
    from matplotlib.figure import Figure as PlotFigure

    from mobiflow.outputs import Run
    from mobiflow.repro.claims import Claim

__all__ = [
    "LINUX_SETS",
    "Block",
    "Figure",
    "Figures",
    "Heading",
    "Options",
    "Param",
    "Report",
    "Reproduction",
    "Table",
    "Variant",
    "gather",
    "have_ns2",
    "json_safe",
    "main",
    "ns2_validation",
    "parse_sets",
    "quick_without_ns2",
    "row",
    "run_variants",
    "save_figure",
    "submit_variants",
]

T = TypeVar("T")


def have_ns2() -> bool:
    """Whether ns-2 (``ns``) is on the PATH: the ns-2 columns need it."""
    return shutil.which("ns") is not None


def ns2_validation() -> ModuleType | None:
    """The shipped ns-2 cross-validation (``validation/ns2/validate.py``: its twin
    cases and ``validate``), loaded once; ``None`` if the package lacks it."""
    name = "mobiflow_validate_ns2"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(
        name, _resources.VALIDATION / "ns2" / "validate.py"
    )
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    # dataclasses resolve their module through sys.modules while the class is built.
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# ----- options -------------------------------------------------------------------------


@dataclass(frozen=True)
class Param:
    """A parameter of one reproduction beyond the common options: ``--NAME VALUE`` on
    its command line, ``Options.params[name]`` in its code."""

    name: str
    """The flag without its dashes (``duration``, ``ns2-seeds``); the key in
    :attr:`Options.params` has underscores for dashes."""
    type: Callable[[str], Any]
    default: Any
    help: str
    metavar: str | None = None
    nargs: str | None = None

    @property
    def key(self) -> str:
        return self.name.replace("-", "_")


@dataclass(frozen=True)
class Options:
    """How to run a reproduction: the same fields for every one of them."""

    out: Path
    """The folder for the report, ``results.json``, the figures and kept runs."""
    quick: bool = False
    """Shortened runs (what it shortens is the reproduction's :attr:`Reproduction.quick`)."""
    jobs: int = 2
    """Runs at once (threads; the engine runs without the GIL)."""
    figures: bool = True
    ns2: str = "auto"
    """Run the ns-2 twins: ``auto`` (when ``ns`` is installed), ``yes`` or ``no``."""
    sets: Mapping[str, object] = field(default_factory=dict)
    """Overrides for every run (``--set KEY=VALUE``), where the reproduction takes them."""
    skip: frozenset[str] = frozenset()
    """Optional parts left out (``--no-PART``)."""
    params: Mapping[str, Any] = field(default_factory=dict)
    """The reproduction's own parameters (:attr:`Reproduction.params`), by key."""
    progress: Callable[[str], None] | None = None
    """Where the reproduction says what it is doing; ``None`` prints."""

    def say(self, message: str) -> None:
        """Report progress (one or more lines)."""
        if self.progress is None:
            print(message)
            return
        for line in message.splitlines():
            if line.strip():
                self.progress(line.strip())

    def wants(self, part: str) -> bool:
        """Whether the optional part ``part`` is to be run."""
        return part not in self.skip

    def use_ns2(self, auto: bool = True) -> bool:
        """Whether to run ns-2: ``yes``, or ``auto`` when ``auto`` holds and ``ns`` is
        installed (``ValueError`` for ``yes`` without ``ns``)."""
        if self.ns2 == "yes":
            if not have_ns2():
                raise ValueError("--ns2 yes but `ns` is not installed")
            return True
        return self.ns2 == "auto" and auto and have_ns2()


# ----- runs ----------------------------------------------------------------------------

LINUX_SETS: Mapping[str, object] = {"tcp.profile": "linux"}
"""The overrides of a reproduction's Linux runs (its ``linux`` part): the scenario's TCP
on the ``linux`` profile (what an unmodified Linux stack does, as the profile models
it), keeping what the scenario sets explicitly."""


@dataclass(frozen=True)
class Variant:
    """One run of a reproduction: a scenario file (shipped, or written by the
    reproduction), the overrides that make the variant, and whether its results folder
    (series for the figures) is kept."""

    key: str
    path: PathLike
    sets: Mapping[str, object] = field(default_factory=dict)
    keep: bool = False

    def scenario(self, extra: Mapping[str, object] | None = None) -> Scenario:
        return Scenario.load(self.path, set={**self.sets, **(extra or {})})


def submit_variants(
    pool: ThreadPoolExecutor,
    variants: Iterable[Variant],
    folder: Callable[[Variant], Path | None] | None = None,
    extra: Mapping[str, object] | None = None,
) -> dict[str, Future[Run]]:
    """Start the variants' runs in ``pool`` (beside other work, such as ns-2 twins);
    each future by the variant's key. ``folder(variant)`` gives where a kept variant
    writes its results (otherwise they stay in memory); ``extra`` overrides go on top
    of every variant's own."""
    return {
        v.key: pool.submit(
            v.scenario(extra).run, folder(v) if (folder is not None and v.keep) else None
        )
        for v in variants
    }


def run_variants(
    variants: Iterable[Variant],
    jobs: int,
    folder: Callable[[Variant], Path | None] | None = None,
    extra: Mapping[str, object] | None = None,
) -> dict[str, Run]:
    """Run the variants ``jobs`` at a time (see :func:`submit_variants`); each ``Run``
    by the variant's key."""
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return gather(submit_variants(pool, variants, folder, extra))


def gather(futures: Mapping[str, Future[T]]) -> dict[str, T]:
    """The results of futures, by key, in the order given."""
    return {k: f.result() for k, f in futures.items()}


# ----- the report ----------------------------------------------------------------------


@dataclass(frozen=True)
class Heading:
    """A section heading of a reproduction's report (level 1 is its title)."""

    level: int
    text: str


@dataclass(frozen=True)
class Figure:
    """A figure file the reproduction wrote into its folder, shown in its report."""

    file: str
    alt: str | None = None
    """The image's text (the file name when ``None``)."""


@dataclass(frozen=True)
class Figures:
    """Figures side by side, on one line of the page."""

    items: Sequence[Figure]


@dataclass(frozen=True)
class Table:
    """A Markdown table: a header and rows of cells (anything with ``str``)."""

    header: Sequence[str]
    rows: Sequence[Sequence[object]]
    compact_rule: bool = False
    """Spell the rule under the header ``|---|---|`` rather than ``| --- | --- |``."""

    def lines(self) -> list[str]:
        n = len(self.header)
        rule = "|" + "---|" * n if self.compact_rule else row(*(["---"] * n))
        return [row(*self.header), rule, *(row(*r) for r in self.rows)]


def row(*cells: object) -> str:
    """One Markdown table row."""
    return "| " + " | ".join(str(c) for c in cells) + " |"


def save_figure(fig: PlotFigure, path: Path, dpi: int = 110) -> Path:
    """Lay ``fig`` out, write it to ``path`` and close it (pyplot keeps every figure
    open until then); returns ``path``."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path


Block = str | Heading | Figure | Figures | Table
"""One piece of a report: a line (or lines) of Markdown text, a heading, a table or a
figure."""


@dataclass
class Report:
    """What a reproduction returns: its page as blocks, its data and its claims."""

    key: str
    """The reproduction's key."""
    blocks: list[Block]
    """The page, title first (a level-1 :class:`Heading`)."""
    results: Any
    """Every number, as ``results.json`` keeps it (plain data)."""
    file: str = "report.md"
    """The page's file name in the reproduction's folder."""
    claims: list[Claim] = field(default_factory=list)
    """The paper's headline claims judged from :attr:`results`."""
    json_options: Mapping[str, Any] = field(default_factory=lambda: {"indent": 2})
    """How ``results.json`` is spelled (``json.dumps`` keywords)."""
    json_newline: bool = False
    """Whether ``results.json`` ends with a newline."""
    trailing_newline: bool = True
    """Whether the page ends with a newline."""

    @property
    def title(self) -> str:
        first = self.blocks[0] if self.blocks else None
        return first.text if isinstance(first, Heading) else ""

    @property
    def figures(self) -> list[str]:
        """The figure files the page shows, in order."""
        out: list[str] = []
        for b in self.blocks:
            if isinstance(b, Figure):
                out.append(b.file)
            elif isinstance(b, Figures):
                out += [f.file for f in b.items]
        return out

    @property
    def tables(self) -> list[tuple[str, Table]]:
        """Every table with the heading it stands under."""
        heading, out = "", []
        for b in self.blocks:
            if isinstance(b, Heading):
                heading = b.text
            elif isinstance(b, Table):
                out.append((heading, b))
        return out

    def markdown(self, links: str = "", depth: int = 0, title: bool = True) -> str:
        """The page as Markdown. ``links`` goes before every figure's file name (the
        reproduction's folder, seen from where the page is put); headings go ``depth``
        levels down; ``title=False`` leaves the title out (a section heading stands for
        it)."""
        lines: list[str] = []
        blocks = self.blocks if title else self.blocks[1:]

        def image(f: Figure) -> str:
            return f"![{f.file if f.alt is None else f.alt}]({links}{f.file})"

        for b in blocks:
            if isinstance(b, Heading):
                lines.append("#" * (b.level + depth) + " " + b.text)
            elif isinstance(b, Figure):
                lines.append(image(b))
            elif isinstance(b, Figures):
                lines.append(" ".join(image(f) for f in b.items))
            elif isinstance(b, Table):
                lines += b.lines()
            else:
                lines.append(b)
        text = "\n".join(lines)
        return text + "\n" if self.trailing_newline else text

    def results_json(self) -> str:
        """The text of ``results.json``."""
        text = json.dumps(self.results, **self.json_options)
        return text + "\n" if self.json_newline else text

    def plain_results(self) -> Any:
        """:attr:`results` as ``results.json`` gives them back (plain data: lists for
        tuples, text keys)."""
        return json.loads(self.results_json())

    def write(self, out: Path) -> Path:
        """Write the page and ``results.json`` into ``out``; the page's path."""
        out.mkdir(parents=True, exist_ok=True)
        path = out / self.file
        path.write_text(self.markdown(), encoding="utf-8")
        (out / "results.json").write_text(self.results_json(), encoding="utf-8")
        return path


def json_safe(x: Any) -> Any:
    """``x`` with infinities as ``"inf"``/``"-inf"`` and NaN as ``None`` (JSON has none)."""
    if isinstance(x, float) and not math.isfinite(x):
        return None if math.isnan(x) else ("inf" if x > 0 else "-inf")
    if isinstance(x, dict):
        return {k: json_safe(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [json_safe(v) for v in x]
    return x


# ----- the declaration -----------------------------------------------------------------


@dataclass(frozen=True)
class Reproduction:
    """One paper's reproduction, as ``mobiflow reproduce`` and :func:`main` see it."""

    key: str
    """Its name on the command line (``afc``, ``freeze-dccp``)."""
    title: str
    """Its section title in the joint report."""
    run: Callable[[Options], Report]
    """Run it and return its report (without writing it); the module that defines
    this function is the reproduction's (``python -m MODULE``, its docstring the
    ``--help`` text)."""
    parts: tuple[str, ...] = ()
    """Optional parts, each with a ``--no-PART`` flag."""
    params: tuple[Param, ...] = ()
    quick: Callable[[Options], Options] | None = None
    """What ``--quick`` changes besides :attr:`Options.quick` (fewer parts, ns-2 off)."""
    generate: Callable[[], Sequence[Path]] | None = None
    """Rewrite the scenario files the reproduction generates (``--generate``)."""
    claims: Callable[[Mapping[str, Any]], list[Claim]] | None = None
    """Its claims, from its ``results.json`` data."""
    report_file: str = "report.md"
    takes_sets: bool = False
    """Whether ``--set KEY=VALUE`` applies to its runs."""

    @property
    def module(self) -> str:
        """The module that declares it (by its import name also when it runs as
        ``python -m``)."""
        name = self.run.__module__
        spec = getattr(sys.modules.get(name), "__spec__", None)
        return spec.name if name == "__main__" and spec is not None else name

    @property
    def description(self) -> str:
        """The first paragraph of its module's docstring (else its title)."""
        doc = getattr(sys.modules.get(self.module), "__doc__", None) or ""
        return doc.split("\n\n")[0].strip() or self.title

    def options(self, out: Path, quick: bool = False, **fields: Any) -> Options:
        """Options with this reproduction's defaults (its parameters, what ``quick``
        changes)."""
        params = {p.key: p.default for p in self.params}
        params.update(fields.pop("params", {}))
        opts = Options(out=out, quick=quick, params=params, **fields)
        if quick and self.quick is not None:
            opts = self.quick(opts)
        return opts

    def reproduce(self, opts: Options) -> Report:
        """Run it into ``opts.out``: write its page and ``results.json`` there and
        return the report."""
        opts.out.mkdir(parents=True, exist_ok=True)
        report = self.run(opts)
        if not report.claims:
            report.claims = self.judge(report.plain_results())
        report.write(opts.out)
        return report

    def judge(self, results: Mapping[str, Any]) -> list[Claim]:
        """The claims judged from ``results.json`` data; none where the results lack
        what a claim needs (a quick run, say): no verdict rather than a wrong one."""
        if self.claims is None:
            return []
        try:
            rows = self.claims(results)
        except (KeyError, TypeError, ZeroDivisionError):
            return []
        from mobiflow.repro.claims import LINUX, with_linux

        linux = results.get(LINUX)
        if not linux:
            return rows
        try:
            return with_linux(rows, self.claims(linux))
        except (KeyError, TypeError, ZeroDivisionError):
            return rows

    def main(self, argv: Sequence[str] | None = None) -> int:
        """Its command line (``python -m MODULE``): :func:`main`."""
        return main(self, argv)

    def parser(self) -> argparse.ArgumentParser:
        ap = argparse.ArgumentParser(prog=f"python -m {self.module}", description=self.description)
        ap.add_argument(
            "--out",
            type=Path,
            default=Path("out") / self.key.replace("-", "_"),
            help="output folder",
        )
        ap.add_argument("--quick", action="store_true", help="shortened runs; indicative only")
        ap.add_argument(
            "--jobs",
            "--workers",
            dest="jobs",
            type=int,
            default=2,
            help="runs at once (default 2)",
        )
        ap.add_argument("--no-figures", action="store_true", help="skip the figures")
        ap.add_argument(
            "--ns2",
            choices=("auto", "yes", "no"),
            default="auto",
            help="run the ns-2 twins (auto: when `ns` is installed)",
        )
        if self.takes_sets:
            ap.add_argument(
                "--set",
                dest="sets",
                action="append",
                default=[],
                metavar="KEY=VALUE",
                help="override for every run (e.g. tcp.idle_restart=false); repeatable",
            )
        for part in self.parts:
            ap.add_argument(f"--no-{part}", action="store_true", help=f"skip the {part} part")
        for p in self.params:
            ap.add_argument(
                f"--{p.name}",
                dest=p.key,
                type=p.type,
                default=p.default,
                help=p.help,
                metavar=p.metavar,
                nargs=p.nargs,
            )
        if self.generate is not None:
            ap.add_argument(
                "--generate", action="store_true", help="rewrite the generated scenarios and exit"
            )
        return ap


def quick_without_ns2(opts: Options) -> Options:
    """``--quick`` for a reproduction whose slow part is ns-2: no twins unless asked."""
    return replace(opts, ns2="no") if opts.ns2 == "auto" else opts


def parse_sets(items: Sequence[str], error: Callable[[str], Any]) -> dict[str, object]:
    """``KEY=VALUE`` texts as overrides; ``error`` is called for one without ``=``."""
    sets: dict[str, object] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            error(f"--set {item!r}: expected KEY=VALUE")
        sets[key] = value
    return sets


def main(repro: Reproduction, argv: Sequence[str] | None = None) -> int:
    """The command line of every reproduction (``python -m mobiflow.repro.NAME``)."""
    ap = repro.parser()
    args = ap.parse_args(list(argv) if argv is not None else None)
    if repro.generate is not None and args.generate:
        for p in repro.generate():
            print(f"wrote {p}")
        return 0
    if args.ns2 == "yes" and not have_ns2():
        ap.error("--ns2 yes but `ns` is not installed")
    opts = repro.options(
        args.out,
        quick=args.quick,
        jobs=args.jobs,
        figures=not args.no_figures,
        ns2=args.ns2,
        sets=parse_sets(getattr(args, "sets", []), ap.error),
        skip=frozenset(p for p in repro.parts if getattr(args, f"no_{p.replace('-', '_')}")),
        params={p.key: getattr(args, p.key) for p in repro.params},
    )
    report = repro.reproduce(opts)
    print(f"wrote {opts.out / report.file}")
    return 0
