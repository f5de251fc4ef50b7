"""Benchmark: the start of one Dagster step process of the demo, with and without bytecode.

    .venv/bin/python benchmarks/step_start.py [--python PY ...] [--repeat 3]

Each step of a `dagster asset materialize` run (the multiprocess executor) is a fresh
interpreter that imports the code location before it runs anything. Timed here: a fresh
interpreter importing `dagster_dataframely_demo.definitions`, in each environment `--python`
names (default this one), the runs interleaved. With PYTHONDONTWRITEBYTECODE set (CI shells,
this machine), an environment built without `.pyc` files compiles Dagster and the package
from source in every such process: compare a checkout built before `UV_COMPILE_BYTECODE` with
one built after. Printed: seconds and CPU seconds of the child (user + system), medians.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time

from _measure import interleaved


def run(python: str) -> dict[str, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([python, "-c", "import dagster_dataframely_demo.definitions"], check=True)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return {"seconds": seconds, "cpu_seconds": cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", nargs="+", default=[sys.executable], help="interpreters")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (median)")
    args = parser.parse_args()
    found = interleaved(args.python, args.repeat, run)
    print(f"{'python':48} {'start s':>8} {'cpu s':>6}")
    for python, figures in found.items():
        print(f"{python[-48:]:48} {figures['seconds']:8.2f} {figures['cpu_seconds']:6.2f}")


if __name__ == "__main__":
    main()
