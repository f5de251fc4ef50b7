"""The component through the real CLIs: `dg` in a project written to a temporary directory
(offline: the project's `.venv` is this environment), and `dagster asset materialize` with a
DAGSTER_HOME, which runs each step in its own process (the multiprocess executor)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pytest
from support import printed_summaries

VENV = Path(sys.executable).parent.parent
COMPONENT = "dagster_dataframely.SchemaChecksComponent"

PYPROJECT = """\
[project]
name = "shop"
version = "0.1.0"
requires-python = ">=3.10"
dependencies = ["dagster-dataframely"]

[tool.dg]
directory_type = "project"

[tool.dg.project]
root_module = "shop"
"""

DEFINITIONS = """\
from pathlib import Path

import dagster as dg


@dg.definitions
def defs() -> dg.Definitions:
    return dg.load_from_defs_folder(path_within_project=Path(__file__).parent)
"""

ORDERS = """\
import dagster as dg
import polars as pl

from dagster_dataframely.data import defective_orders


@dg.asset
def orders() -> pl.DataFrame:
    return defective_orders()


@dg.asset(deps=[orders])
def revenue() -> None:
    return None
"""

RESOURCES = """\
import dagster as dg

import dagster_dataframely as dd


@dg.definitions
def resources() -> dg.Definitions:
    return dg.Definitions(
        resources={"io_manager": dd.ParquetIOManager(base_dir=dg.EnvVar("SHOP_WAREHOUSE"))}
    )
"""


@dataclass(frozen=True)
class Project:
    root: Path

    @property
    def quality(self) -> Path:
        return self.root / "src" / "shop" / "defs" / "quality"

    def env(self, dagster_home: Path | None = None) -> dict[str, str]:
        env = {
            **os.environ,
            "VIRTUAL_ENV": str(VENV),
            "PATH": f"{VENV / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
            # The project's modules, then the sources under test (when run from a checkout).
            "PYTHONPATH": os.pathsep.join(
                filter(None, [str(self.root / "src"), os.environ.get("PYTHONPATH")])
            ),
            "SHOP_WAREHOUSE": str(self.root / "warehouse"),
            "NO_COLOR": "1",
        }
        env.pop("DAGSTER_HOME", None)
        if dagster_home is not None:
            env["DAGSTER_HOME"] = str(dagster_home)
        return env

    def run(self, *args: str, dagster_home: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(VENV / "bin" / args[0]), *args[1:]],
            cwd=self.root,
            env=self.env(dagster_home),
            capture_output=True,
            text=True,
            timeout=300,
        )

    def configure(self, attributes: str) -> None:
        self.quality.mkdir(parents=True, exist_ok=True)
        body = textwrap.indent(textwrap.dedent(attributes), "  ")
        (self.quality / "defs.yaml").write_text(f"type: {COMPONENT}\n\nattributes:\n{body}")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """A dg project as `create-dagster` would lay it out, written by hand (no downloads)."""
    root = tmp_path_factory.mktemp("shop")
    package = root / "src" / "shop"
    (package / "defs").mkdir(parents=True)
    (root / "pyproject.toml").write_text(PYPROJECT)
    (package / "__init__.py").write_text("")
    (package / "definitions.py").write_text(DEFINITIONS)
    (package / "defs" / "__init__.py").write_text("")
    (package / "defs" / "orders.py").write_text(ORDERS)
    (package / "defs" / "resources.py").write_text(RESOURCES)
    (root / ".venv").symlink_to(VENV, target_is_directory=True)
    return Project(root)


@pytest.fixture
def instance_at(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """A DAGSTER_HOME for one test; the test reads its runs back after the CLI wrote them."""
    home = tmp_path / "dagster_home"
    home.mkdir()
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    yield home


def _last_run() -> tuple[dg.DagsterRun, list[dg.EventLogEntry]]:
    with dg.DagsterInstance.get() as instance:
        run = instance.get_runs(limit=1)[0]
        return run, list(instance.all_logs(run.run_id))


def _evaluations(logs: list[dg.EventLogEntry]) -> dict[str, dg.AssetCheckEvaluation]:
    return {
        entry.dagster_event.event_specific_data.check_name: entry.dagster_event.event_specific_data
        for entry in logs
        if entry.dagster_event is not None
        and entry.dagster_event.event_type == dg.DagsterEventType.ASSET_CHECK_EVALUATION
    }  # type: ignore[union-attr]


def _materialized(logs: list[dg.EventLogEntry]) -> set[str]:
    return {
        entry.dagster_event.asset_key.to_user_string()  # type: ignore[union-attr]
        for entry in logs
        if entry.dagster_event is not None
        and entry.dagster_event.event_type == dg.DagsterEventType.ASSET_MATERIALIZATION
    }


def test_dg_lists_scaffolds_and_validates_the_component(project: Project) -> None:
    listed = project.run("dg", "list", "components", "--json")
    assert listed.returncode == 0, listed.stderr
    assert COMPONENT in {entry["key"] for entry in json.loads(listed.stdout)["items"]}

    scaffolded = project.run("dg", "scaffold", "defs", COMPONENT, "quality")
    assert scaffolded.returncode == 0, scaffolded.stderr
    assert (project.quality / "defs.yaml").read_text().startswith(f"type: {COMPONENT}\n")
    for command in (("check", "yaml"), ("check", "defs")):
        checked = project.run("dg", *command)
        assert checked.returncode == 0, checked.stdout + checked.stderr

    project.configure(
        """\
        checks:
          - asset: orders
            schema: dagster_dataframely.data:OrdersSchema
            warn: [amount_max]
        """
    )
    broken = project.run("dg", "check", "defs")
    assert broken.returncode != 0
    output = broken.stdout + broken.stderr
    assert (
        f"{project.quality / 'defs.yaml'}: checks[0] (asset orders, schema OrdersSchema)" in output
    )
    assert "'amount_max' is neither a rule nor a column of schema OrdersSchema" in output


def test_dg_check_yaml_names_a_wrong_key_inside_an_entry_and_the_key_it_needs(
    project: Project,
) -> None:
    project.configure(
        """\
        checks:
          - asset: orders
            schemas: dagster_dataframely.data:OrdersSchema
        collections:
          - collection: shop:Shop
            member: {orders: orders}
        """
    )

    checked = project.run("dg", "check", "yaml")

    output = checked.stdout + checked.stderr
    assert checked.returncode != 0, output
    defs_yaml = project.quality / "defs.yaml"
    assert (
        f"{defs_yaml}:6 - {COMPONENT} attributes.checks.0.schemas Additional properties" in output
    )
    assert "('schemas' was unexpected)" in output
    assert f"{defs_yaml}:5 - {COMPONENT} attributes.checks.0 'schema' is a required" in output
    assert "attributes.collections.0.member Additional properties are not allowed" in output
    assert "attributes.collections.0 'members' is a required property" in output
    assert "is not valid under any of the given schemas" not in output


def test_dg_launch_runs_the_checks_and_an_error_rule_blocks_downstream(
    project: Project, instance_at: Path
) -> None:
    project.configure(
        """\
        checks:
          - asset: orders
            schema: dagster_dataframely.data:OrdersSchema
        """
    )

    launched = project.run("dg", "launch", "--assets", "orders,revenue", dagster_home=instance_at)

    run, logs = _last_run()
    assert run.status == dg.DagsterRunStatus.FAILURE, launched.stderr
    assert _materialized(logs) == {"orders"}
    evaluations = _evaluations(logs)
    assert evaluations["dy_rule__primary_key"].metadata["dy_failed_count"].value == 2
    assert evaluations["dy_rule__primary_key"].severity == dg.AssetCheckSeverity.ERROR
    assert evaluations["dy_rule__amount__max"].severity == dg.AssetCheckSeverity.WARN
    # A step of many tables writes each table's lines under its progress line, one entry.
    lines = [line.strip() for e in logs for line in e.user_message.splitlines()]
    loaded = [line for line in lines if line.startswith("Loaded orders")]
    assert loaded == [
        "Loaded orders through IO manager 'io_manager' as a polars.LazyFrame; evaluating streaming."
    ]
    # The CLI prints the checks' step summary: the figures, not only "did not pass".
    (summary,) = printed_summaries(launched.stdout + launched.stderr)
    assert summary.headline == "22 checks of 1 asset: 7 failed, 3 warned, 12 passed."
    rows = {row["rule"]: row for row in summary.rows}
    assert rows["primary_key"]["failing rows"] == "2 of 13"
    assert rows["primary_key"]["tolerance"] == "error above 0 rows"


def test_dagster_asset_materialize_runs_warned_checks_in_their_own_process(
    project: Project, instance_at: Path
) -> None:
    project.configure(
        """\
        check_granularity: column
        checks:
          - asset: orders
            schema: dagster_dataframely.data:OrdersSchema
            warn: [primary_key, paid_orders_have_amount, order_id, line_item_id,
                   customer_email, amount]
        """
    )

    materialized = project.run(
        "dagster",
        "asset",
        "materialize",
        "-m",
        "shop.definitions",
        "--select",
        "orders,revenue",
        dagster_home=instance_at,
    )

    run, logs = _last_run()
    assert run.status == dg.DagsterRunStatus.SUCCESS, materialized.stderr
    assert _materialized(logs) == {"orders", "revenue"}
    assert any('Launching subprocess for "orders__dy_checks"' in e.user_message for e in logs)
    evaluations = _evaluations(logs)
    amount = evaluations["dy_col__amount"]
    assert not amount.passed and amount.severity == dg.AssetCheckSeverity.WARN
    assert amount.metadata["dy_failed_count"].value == 2  # amount|min and amount|max
    (summary,) = printed_summaries(materialized.stdout + materialized.stderr)
    assert {row["rule"]: row["verdict"] for row in summary.rows}["dy_col__amount"] == "warned"
    assert evaluations["dy_col__sku"].passed
