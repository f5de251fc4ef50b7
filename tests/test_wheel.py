"""The package works without the repository: its wheel, installed into a fresh environment with
no dev dependencies, runs the "Install and first checks" page's example from a folder outside
the repository, in process and through the `dagster` CLI the page names.

The wheel is built with uv and installed with `uv pip` (uv's cache keeps it fast; dependencies
not cached come from PyPI). The CLI run uses Dagster's in-process executor, as a test keeps its
time; the checks it runs are the same.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_docs import ROOT, _blocks

pytestmark = pytest.mark.xdist_group("wheel")

UV = ROOT / ".uv" / "bin" / "uv"
PAGE = ROOT / "docs" / "install.md"
IN_PROCESS = json.dumps({"execution": {"config": {"in_process": {}}}})


def _sh(*command: str | Path, cwd: Path, env: dict[str, str], ok: bool = True) -> str:
    done = subprocess.run(
        [str(part) for part in command], cwd=cwd, env=env, capture_output=True, text=True
    )
    output = done.stdout + done.stderr
    assert (done.returncode == 0) is ok, output
    return output


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A fresh virtual environment holding the built wheel with its `pandas` extra, and an
    environment for commands run in it (no trace of the repository's own venv)."""
    root = tmp_path_factory.mktemp("wheel")
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH"}}
    _sh(UV, "build", "--wheel", "--out-dir", root / "dist", ROOT, cwd=root, env=env)
    (wheel,) = (root / "dist").glob("dagster_dataframely-*.whl")
    venv = root / "venv"
    _sh(UV, "venv", "--quiet", "--python", sys.executable, venv, cwd=root, env=env)
    _sh(UV, "pip", "install", "--quiet", "--python", venv, f"{wheel}[pandas]", cwd=root, env=env)
    env["DAGSTER_HOME"] = str(root / "dagster_home")
    Path(env["DAGSTER_HOME"]).mkdir()
    return venv, env


def test_the_wheel_runs_the_install_pages_example_outside_the_repository(
    installed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    venv, env = installed
    setup, blocks = _blocks(PAGE)
    by_heading = {block.heading: block.code for block in blocks}
    definitions = setup + "\n" + by_heading["A minimal `Definitions` with checks"]
    (tmp_path / "definitions.py").write_text(definitions)
    # The in-process run of "Run it", and where the package and a dev dependency come from.
    where = 'import importlib.util as u\nprint("from:", dd.__file__, u.find_spec("pytest"))\n'
    (tmp_path / "run.py").write_text(definitions + "\n" + by_heading["Run it"] + where)

    printed = _sh(venv / "bin" / "python", "run.py", cwd=tmp_path, env=env).splitlines()
    assert "dy_rule__amount__min         FAILED ERROR  1 of 4 rows" in printed, printed
    (package, pytest_spec) = next(p.split()[1:] for p in printed if p.startswith("from: "))
    assert Path(package).is_relative_to(venv), package
    assert pytest_spec == "None", "the fresh environment holds a dev dependency"

    # The page's command; it exits 1 because blocking checks failed, as the page says.
    dagster = venv / "bin" / "dagster"
    command = ("asset", "materialize", "-f", "definitions.py", "--select", "orders")
    logged = _sh(dagster, *command, "--config-json", IN_PROCESS, cwd=tmp_path, env=env, ok=False)
    assert "Asset check 'dy_rule__amount__min' on 'orders' did not pass" in logged, logged
    assert "Asset check 'dy_schema__columns' on 'orders' passed" in logged, logged
    assert "3 blocking asset checks failed with ERROR severity" in logged, logged
