"""docs/component.md's `create-dagster` command pins the release that keeps the environment's
Dagster: the one of Dagster's own version, whose `dagster-dg-core` and `dagster-shared` are the
ones `dagster` requires (PyPI's metadata: `create-dagster==X` requires `dagster-dg-core==X`)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from importlib.metadata import requires, version
from pathlib import Path

PAGE = Path(__file__).parents[1] / "docs" / "component.md"


def _pinned(distribution: str, requirement: str) -> bool:
    return requirement.replace(" ", "") == f"{distribution}=={version(distribution)}"


def test_the_create_dagster_command_pins_the_environments_dagster() -> None:
    (command,) = re.findall(r"^pip install \"create-dagster==.*$", PAGE.read_text(), re.M)
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    # The command's requirement as the shell expands it, with this environment's python.
    expanded = subprocess.run(
        ["bash", "-c", command.replace("pip install", "echo", 1)],
        env={**os.environ, "PATH": path},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()

    dagster = version("dagster")
    assert expanded == f"create-dagster=={dagster}"
    # What create-dagster of that version brings, dg-core and shared of that version, is
    # what this Dagster requires and has: the install changes none of them.
    assert version("dagster-dg-core") == version("dagster-shared") == dagster
    assert any(_pinned("dagster-shared", r) for r in requires("dagster") or [])
    assert any(_pinned("dagster-shared", r) for r in requires("dagster-dg-core") or [])
    # The page's `uvx` example names the project's locked Dagster (the oldest end of the
    # supported range runs an older one, so it is read from uv.lock, not from this environment).
    assert f"uvx create-dagster@{_locked('dagster')} project shop" in PAGE.read_text()


def _locked(distribution: str) -> str:
    """The version of `distribution` in the project's uv.lock."""
    lock = (PAGE.parents[1] / "uv.lock").read_text()
    (found,) = re.findall(rf'^name = "{distribution}"\nversion = "([^"]+)"$', lock, re.M)
    return found
