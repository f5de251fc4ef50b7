"""`dagster-dataframely migrate-pandera package.module:Model [--output FILE]`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
SCRIPT = Path(sys.executable).with_name("dagster-dataframely")


def run(*args: str, cwd: Path = HERE) -> subprocess.CompletedProcess[str]:
    # The console script is part of the package: installing the project must provide it.
    assert SCRIPT.exists(), f"{SCRIPT} is missing: the project's install must create it"
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    return subprocess.run(
        [str(SCRIPT), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_prints_the_migrated_source() -> None:
    result = run("migrate-pandera", "pandera_models:Orders")
    assert result.returncode == 0, result.stderr
    assert "class Orders(dy.Schema):" in result.stdout
    compile(result.stdout, "orders.py", "exec")


def test_writes_the_source_to_a_file(tmp_path: Path) -> None:
    target = tmp_path / "orders_schema.py"
    result = run("migrate-pandera", "pandera_models:readings", "--output", str(target))
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    source = target.read_text(encoding="utf-8")
    assert "class Readings(dy.Schema):" in source
    assert 'pandera_models.readings.columns["value"].checks[1]' in source


def test_imports_from_the_current_directory(tmp_path: Path) -> None:
    (tmp_path / "local_models.py").write_text(
        "import pandera.polars as pa\n\n\nclass Local(pa.DataFrameModel):\n    a: int\n"
    )
    result = run("migrate-pandera", "local_models:Local", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "class Local(dy.Schema):" in result.stdout


@pytest.mark.parametrize(
    ("path", "named"),
    [
        ("no_such_module:Orders", "cannot import module 'no_such_module'"),
        ("pandera_models:NoSuchModel", "cannot import 'NoSuchModel' from module 'pandera_models'"),
        ("pandera_models", "is not an import path of the form package.module:Model"),
    ],
)
def test_a_bad_path_is_one_line_naming_what_failed_and_exits_2(path: str, named: str) -> None:
    result = run("migrate-pandera", path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert named in result.stderr


def test_a_model_that_cannot_be_migrated_exits_1() -> None:
    result = run("migrate-pandera", "pandera_models:orders_frame")
    assert result.returncode == 1
    assert "not a Pandera polars model" in result.stderr
