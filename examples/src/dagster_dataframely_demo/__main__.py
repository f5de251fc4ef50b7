"""`make demo`: materialize the demo through the `dagster` CLI, then summarize the runs.

Each run is a `dagster asset materialize` (the multiprocess executor, one process per step)
against a persistent `DAGSTER_HOME` under `DEMO_DIR` (default `.demo`): the unpartitioned
assets, then two days of `daily_sales` (a day with bulk orders, and a quiet one). Dagster's
own log goes to `DEMO_DIR/logs/`; the console gets one line per step and, at the end, the
summary `_summary.py` reads from the instance. `make ui` then serves the same instance.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from ._summary import summary

#: The runs `make demo` launches: a label and the `dagster asset materialize` arguments.
RUNS = [
    ("storefront", ["--select", "not key:daily_sales"]),
    ("daily_sales 2024-05-01", ["--select", "key:daily_sales", "--partition", "2024-05-01"]),
    ("daily_sales 2024-05-02", ["--select", "key:daily_sales", "--partition", "2024-05-02"]),
]
_STEP = re.compile(
    r'STEP_(?P<state>SUCCESS|FAILURE) - (?:Finished execution|Execution) of step "(?P<step>[^"]+)"'
    r"(?: in (?P<took>[\d.]+\w*?)\.?$)?"
)
_SKIPPED = re.compile(r"Dependencies for step (?P<step>\S+) failed: \[(?P<upstream>[^\]]*)\]")
_TELEMETRY_OFF = "telemetry:\n  enabled: false\n"


def main() -> int:
    root = Path(os.environ.get("DEMO_DIR") or ".demo").absolute()
    home, logs = root / "dagster_home", root / "logs"
    for folder in (home, logs):
        folder.mkdir(parents=True, exist_ok=True)
    if not (home / "dagster.yaml").exists():
        (home / "dagster.yaml").write_text(_TELEMETRY_OFF)
    env = {**os.environ, "DAGSTER_HOME": str(home), "DEMO_STORAGE": str(root / "data")}
    os.environ.update(env)  # the summary opens the same instance
    started, clock = dt.datetime.now(dt.timezone.utc), time.monotonic()
    for label, arguments in RUNS:
        print(f"Run {label}:", flush=True)
        _materialize(arguments, logs / f"{label.replace(' ', '_')}.log", env)
    text, intended = summary(started, seconds=time.monotonic() - clock, folder=root)
    print(f"\n{text}")
    return 0 if intended else 1


def _materialize(arguments: list[str], log: Path, env: dict[str, str]) -> None:
    """One `dagster asset materialize`, its log to `log`, a line per step to the console."""
    dagster = Path(sys.executable).with_name("dagster")
    command = [str(dagster), "asset", "materialize", "-m", f"{__package__}.definitions"]
    with (
        log.open("w") as out,
        subprocess.Popen(
            [*command, *arguments],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        ) as process,
    ):
        assert process.stdout is not None
        for line in process.stdout:
            out.write(line)
            _progress(line)
    if process.returncode:  # a failed step fails the run; the summary says which and why
        print(f"  (the run failed; Dagster's log: {log})", flush=True)


def _progress(line: str) -> None:
    if found := _STEP.search(line):
        took = f" in {found['took']}" if found["took"] else ""
        state = "done" if found["state"] == "SUCCESS" else "FAILED"
        print(f"  {state:<7} {found['step']}{took}", flush=True)
    elif found := _SKIPPED.search(line):
        upstream = found["upstream"].replace("'", "")
        print(f"  skipped {found['step']}: {upstream} failed", flush=True)


if __name__ == "__main__":
    sys.exit(main())
