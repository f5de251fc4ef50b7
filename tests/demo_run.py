"""One run of `python -m dagster_dataframely_demo` (what `make demo` runs), shared by the demo
and webserver tests through conftest.py's session fixture `demo`: both modules are in xdist
group "demo", so one worker runs it, once."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class DemoRun:
    folder: Path
    returncode: int
    stdout: str
    stderr: str

    @property
    def home(self) -> Path:
        return self.folder / "dagster_home"

    @property
    def lake(self) -> Path:
        return self.folder / "data" / "lake"


def run_demo(folder: Path) -> DemoRun:
    """`python -m dagster_dataframely_demo` in `folder`, with no DAGSTER_ or DEMO_ setting of
    the test process leaking into it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DAGSTER_", "DEMO_"))}
    run = subprocess.run(
        [sys.executable, "-m", "dagster_dataframely_demo"],
        env={**env, "DEMO_DIR": str(folder)},
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=1800,  # minutes on a quiet machine; far more on a shared, loaded one
        check=False,
    )
    return DemoRun(folder, run.returncode, run.stdout, run.stderr)
