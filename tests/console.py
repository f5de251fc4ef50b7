"""The `dagster-dataframely` console script, run as a user runs it: a subprocess, with this
test process's import path (so the sources under test are the ones imported)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(sys.executable).with_name("dagster-dataframely")


def dagster_dataframely(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The script's run with `args` in `cwd`, `env` added to this process's environment."""
    env = {**os.environ, **(env or {}), "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run(
        [str(SCRIPT), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )
