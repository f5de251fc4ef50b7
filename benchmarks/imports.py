"""Benchmark: what `import dagster_dataframely` adds to a process that already has Dagster.

    .venv/bin/python benchmarks/imports.py [--python PY ...] [--repeat 7]

Every Dagster step process (the multiprocess executor, one pod per step) pays the package's
import before it evaluates a rule. Each run is a fresh interpreter that first imports what any
such process holds anyway (`dagster`, `dataframely`, `polars`), then, on the clock,
`dagster_dataframely` and `dagster_dataframely.sources`.

Printed per interpreter (`--python`, default this one; pass another checkout's
`.venv/bin/python` to compare two trees side by side, the runs interleaved): seconds and CPU
seconds of the package's import, the RSS it adds (MB), each the median of `--repeat` runs, and
the optional heavy dependencies it loaded (none should be: each is imported where it is used).
The figures include compiling the package's sources when the environment has no bytecode.
Target (issue 19): the package adds <= 10 MB and <= 0.1 s.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from _measure import dispatch, interleaved, measured, rss

#: Imported where they are used, never by the package's import itself.
HEAVY = ("duckdb", "deltalake", "pandas", "pyarrow", "pandera", "upath", "fsspec")
TARGET_MB = 10.0
TARGET_SECONDS = 0.1


def measure(_: str) -> dict[str, float]:
    """Import the package in this (fresh) process; report its figures (JSON on stdout)."""
    import dagster  # noqa: F401
    import dataframely  # noqa: F401
    import polars  # noqa: F401

    before = set(sys.modules)
    start_rss = rss()
    with measured() as figures:
        import dagster_dataframely
        import dagster_dataframely.sources  # noqa: F401
    loaded = {name for name in set(sys.modules) - before if name in HEAVY}
    figures["added_mb"] = (rss() - start_rss) / 2**20
    figures["heavy"] = sum(1 << HEAVY.index(name) for name in loaded)
    return figures


def run(python: str) -> dict[str, float]:
    found = subprocess.run(
        [python, __file__, "--measure", "package"], capture_output=True, text=True
    )
    if found.returncode:
        sys.exit(f"{python} failed:\n{found.stderr[-4000:]}")
    return json.loads(found.stdout.strip().splitlines()[-1])


def main(pythons: list[str], repeat: int) -> None:
    # The heavy modules are the same in every run; the median of a bit mask is one of them.
    found = interleaved(pythons, repeat, run)
    header = f"{'python':48} {'import s':>8} {'cpu s':>6} {'added MB':>8} | heavy modules loaded"
    print(header)
    print("-" * len(header))
    for python, figures in found.items():
        heavy = [name for i, name in enumerate(HEAVY) if int(figures["heavy"]) >> i & 1]
        print(
            f"{python[-48:]:48} {figures['seconds']:8.3f} {figures['cpu_seconds']:6.3f} "
            f"{figures['added_mb']:8.1f} | {', '.join(heavy) or 'none'}"
        )
        verdict = (
            "meets"
            if figures["added_mb"] <= TARGET_MB and figures["seconds"] <= TARGET_SECONDS
            else "MISSES"
        )
        print(f"  {verdict} the target (<= {TARGET_MB:.0f} MB, <= {TARGET_SECONDS} s)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", nargs="+", default=[sys.executable], help="interpreters")
    parser.add_argument("--repeat", type=int, default=7, help="runs per figure (median)")
    dispatch(parser, measure, lambda a: main(a.python, a.repeat), ("VARIANT",))
