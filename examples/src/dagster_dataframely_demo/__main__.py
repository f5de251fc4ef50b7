"""`make demo`: materialize the demo through the `dagster` CLI, then summarize the runs.

Each run is a `dagster asset materialize` (the in-process executor: the steps take seconds,
less than a process per step would take to start) against a persistent `DAGSTER_HOME` under
`DEMO_DIR` (default `.demo`): the unpartitioned assets, then two days of `daily_sales` (a day
with bulk orders, and a quiet one). Dagster's own log goes to `DEMO_DIR/logs/`; the console
gets one line per step, read from the instance as the run goes (`_progress.py`), and, at the
end, the summary `_summary.py` reads from the instance. `make ui` then serves the same instance.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg

from ._progress import Progress
from ._summary import summary

#: The runs `make demo` launches: a label and the `dagster asset materialize` arguments.
RUNS = [
    ("storefront", ["--select", "not key:daily_sales"]),
    ("daily_sales 2024-05-01", ["--select", "key:daily_sales", "--partition", "2024-05-01"]),
    ("daily_sales 2024-05-02", ["--select", "key:daily_sales", "--partition", "2024-05-02"]),
]
_TELEMETRY_OFF = "telemetry:\n  enabled: false\n"


def main() -> int:
    root = Path(os.environ.get("DEMO_DIR") or ".demo").absolute()
    home, logs = root / "dagster_home", root / "logs"
    for folder in (home, logs):
        folder.mkdir(parents=True, exist_ok=True)
    if not (home / "dagster.yaml").exists():
        (home / "dagster.yaml").write_text(_TELEMETRY_OFF)
    env = {**os.environ, "DAGSTER_HOME": str(home), "DEMO_STORAGE": str(root / "data")}
    os.environ.update(env)  # the progress and the summary open the same instance
    # Opened before the first CLI starts: the instance's storage is created here, not by two
    # processes at once.
    instance = dg.DagsterInstance.get()
    started, clock = dt.datetime.now(dt.timezone.utc), time.monotonic()
    for label, arguments in RUNS:
        print(f"Run {label}:", flush=True)
        _materialize(instance, arguments, logs / f"{label.replace(' ', '_')}.log", env)
    text, intended = summary(started, seconds=time.monotonic() - clock, folder=root)
    print(f"\n{text}")
    return 0 if intended else 1


def _materialize(
    instance: dg.DagsterInstance, arguments: list[str], log: Path, env: dict[str, str]
) -> None:
    """One `dagster asset materialize`, its log to `log`, a line per step to the console."""
    dagster = Path(sys.executable).with_name("dagster")
    command = [str(dagster), "asset", "materialize", "-m", f"{__package__}.definitions"]
    progress = Progress(instance, known=instance.get_run_ids())
    with (
        log.open("w") as out,
        subprocess.Popen(
            [*command, *arguments], env=env, stdout=out, stderr=subprocess.STDOUT
        ) as process,
    ):
        while process.poll() is None:
            _print(progress.poll())
            time.sleep(1)
    _print(progress.finish())
    if process.returncode:  # a failed step fails the run; the summary says which and why
        print(f"  (the run failed; Dagster's log: {log})", flush=True)


def _print(lines: list[str]) -> None:
    for line in lines:
        print(line, flush=True)


if __name__ == "__main__":
    sys.exit(main())
