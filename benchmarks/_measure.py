"""How the benchmarks measure: one variant per process, so each peak RSS is its own.

A benchmark script hands its command line to `dispatch`. Run plainly, the script is the
parent: it runs itself again for each variant (`child_figures`, with `--measure ARGS`), the
variants round-robin (`interleaved`). Run with `--measure ARGS`, it is the child: it measures
one variant and prints its figures as one JSON line. In the child, the work to time goes
inside `measured()`, after the imports, so every figure leaves out start-up.

The cost tables (`opening`, `cost_row`, `closing`) compare contenders by `cost`: the
client's CPU plus the PostgreSQL server's (`server_cpu`), the figure steadiest under load.
`--baseline SRC` (`baseline_env`) runs a contender on another source tree in the same round
robin, so a before/after ratio sees the same load.

Peak RSS is Linux's `VmHWM`: the high-water mark of the address space `exec` created.
`getrusage().ru_maxrss` would not do: a child inherits its parent's at fork time.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

MB = 2**20
_MEASURE = "--measure"
_STATUS = Path("/proc/self/status")
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
#: The columns of `cost_row`.
COST_HEADER = f"{'s':>7} {'cpu s':>7} {'srv s':>7} {'cost s':>7} {'peak MB':>8} | vs floor"


def peak_rss() -> int:
    """This process's peak RSS in bytes (`ru_maxrss` where there is no `/proc`)."""
    if _STATUS.exists():
        return _status_kb("VmHWM:") * 1024
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def rss() -> int:
    """This process's RSS now, in bytes (0 where there is no `/proc`)."""
    return _status_kb("VmRSS:") * 1024 if _STATUS.exists() else 0


@contextmanager
def measured() -> Iterator[dict[str, float]]:
    """Figures of the block it wraps, filled in when it ends: `seconds` (wall clock),
    `cpu_seconds` (user + system, steadier on a busy machine), `peak_mb` (the process's peak
    RSS, imports included) and `above_start_mb` (that peak less the RSS at the start)."""
    figures: dict[str, float] = {}
    start_rss = rss()
    before = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    yield figures
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    peak = peak_rss()
    figures.update(
        seconds=seconds,
        cpu_seconds=after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,
        peak_mb=peak / MB,
        above_start_mb=max(peak - start_rss, 0) / MB,
    )


def dispatch(
    parser: argparse.ArgumentParser,
    measure: Callable[..., dict[str, float]],
    main: Callable[[argparse.Namespace], None],
    metavar: tuple[str, ...],
) -> None:
    """Parse the command line: with `--measure ARGS`, run `measure(*ARGS)` in this process
    and print its figures for the parent; otherwise run `main` with the parsed arguments."""
    parser.add_argument(_MEASURE, nargs=len(metavar), metavar=metavar, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(*args.measure)), flush=True)
    else:
        main(args)


def run_child(script: str, *arguments: str, label: str, env: dict[str, str] | None = None) -> str:
    """Run `script` with `arguments` in a fresh interpreter (with environment `env`, default
    this one's) and return its stdout; exit with its stderr, under `label`, if it fails."""
    run = subprocess.run(
        [sys.executable, script, *arguments], capture_output=True, text=True, env=env
    )
    if run.returncode:
        sys.exit(f"{label} failed:\n{run.stderr[-4000:]}")
    return run.stdout


def child_figures(
    script: str, *arguments: str, label: str, env: dict[str, str] | None = None
) -> dict[str, float]:
    """The figures of `script --measure *arguments`, measured in a fresh interpreter."""
    output = run_child(script, _MEASURE, *arguments, label=label, env=env)
    return json.loads(output.strip().splitlines()[-1])


def interleaved(
    variants: Iterable[str],
    repeat: int,
    run: Callable[[str], dict[str, float]],
    pick: Callable[[Sequence[float]], float] = statistics.median_low,
) -> dict[str, dict[str, float]]:
    """`run` each variant `repeat` times, round-robin so that background load hits every
    variant alike; per variant, `pick` (the median by default) of each figure."""
    names = list(variants)
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    for _ in range(repeat):
        for name in names:
            runs[name].append(run(name))
    return {
        name: {key: pick([figures[key] for figures in found]) for key in found[0]}
        for name, found in runs.items()
    }


def _status_kb(field: str) -> int:
    for line in _STATUS.read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1])
    return 0


def load_average() -> str:
    """The machine's 1, 5 and 15 minute load averages, for a benchmark's header and footer."""
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def server_cpu(postmaster: int) -> float:
    """CPU seconds of a PostgreSQL server: the postmaster, its live children and the reaped
    ones."""
    ticks = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # a process that ended meanwhile
        if int(entry.name) == postmaster or int(fields[1]) == postmaster:
            ticks += sum(int(field) for field in fields[11:15])  # utime stime cutime cstime
    return ticks / _TICK


def postmaster(connection: Any) -> int:
    """The pid of the postmaster serving a psycopg `connection`: its backend's parent."""
    backend = connection.execute("SELECT pg_backend_pid()").fetchone()[0]
    return int(Path(f"/proc/{backend}/stat").read_text().rsplit(")", 1)[1].split()[1])


def cost(figures: dict[str, float]) -> float:
    """What a contender cost: its CPU plus the database server's."""
    return figures["cpu_seconds"] + figures.get("server_cpu_seconds", 0.0)


def cost_row(label: str, figures: dict[str, float], floor: dict[str, float] | None) -> str:
    """`label` and the `COST_HEADER` columns of `figures`, with the ratio of its cost to
    `floor`'s."""
    ratio = f"{cost(figures) / cost(floor):5.2f}x" if floor else ""
    return (
        f"{label} | {figures['seconds']:7.2f} {figures['cpu_seconds']:7.2f} "
        f"{figures.get('server_cpu_seconds', 0.0):7.2f} {cost(figures):7.2f} "
        f"{figures['peak_mb']:8.0f} | {ratio}"
    )


def opening(header: str) -> None:
    """A cost table's first lines: the load it starts under and its `header`."""
    print(f"load average before: {load_average()} (2 cores; CPU seconds are steadier under load)")
    print(header)
    print("-" * len(header), flush=True)


def closing(repeat: int, note: str = "") -> None:
    """A cost table's last line: the load it ended under and what its figures are."""
    print(
        f"load average after: {load_average()}; medians of {repeat} interleaved runs"
        + (f"; {note}" if note else ""),
        flush=True,
    )


def baseline_env(source: str) -> dict[str, str]:
    """This environment with `source` (a tree's `src`) first on the path: a child run with
    it measures that tree's package."""
    return {**os.environ, "PYTHONPATH": str(Path(source).resolve())}
