"""`dagster-dataframely report` over real runs: a gated asset and a partitioned asset with
sidecar checks, run by `dagster job execute` (the multiprocess executor, one process per step)
into a persistent DAGSTER_HOME. Every figure the report shows is compared with the check
evaluations' metadata, read back independently through the instance (run by run, from each
run's event log); the HTML is opened in Debian's headless chromium."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
from console import dagster_dataframely

import dagster_dataframely as dd
from dagster_dataframely.errors import (
    InstanceNotFoundError,
    InvalidSettingError,
    NoCheckHistoryError,
    UnmatchedSelectionError,
)

DEFINITIONS = """\
import dagster as dg
import polars as pl

import dagster_dataframely as dd
from dagster_dataframely.data import OrdersSchema, defective_orders

REGIONS = dg.StaticPartitionsDefinition(["eu", "us"])


@dd.asset(schema=OrdersSchema, quarantine=True)
def orders() -> pl.DataFrame:
    return defective_orders()


@dg.asset(partitions_def=REGIONS, group_name="regions")
def regional(context: dg.AssetExecutionContext) -> pl.DataFrame:
    frame = defective_orders()
    return frame if context.partition_key == "eu" else frame.head(3)


defs = dd.with_schemas(
    dg.Definitions(
        assets=[orders, regional],
        jobs=[
            dg.define_asset_job("orders_job", selection="orders*"),
            dg.define_asset_job("regional_job", selection="regional", partitions_def=REGIONS),
        ],
        resources={"io_manager": dd.ParquetIOManager(base_dir=dg.EnvVar("SHOP_WAREHOUSE"))},
    ),
    {"regional": OrdersSchema},
    keep_failing_rows=True,
)
"""

DAGSTER = str(Path(sys.executable).with_name("dagster"))
#: The runs written into the instance: (job, partition).
RUNS = [("orders_job", None), ("orders_job", None), ("regional_job", "eu"), ("regional_job", "us")]


def _env(home: Path, root: Path) -> dict[str, str]:
    env = {**os.environ, "DAGSTER_HOME": str(home), "SHOP_WAREHOUSE": str(root / "warehouse")}
    env["PYTHONPATH"] = os.pathsep.join([str(root), *sys.path])
    return env


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A project directory whose `dagster_home` holds the runs of `RUNS`, each by the CLI."""
    root = tmp_path_factory.mktemp("report")
    (root / "shop_report.py").write_text(DEFINITIONS)
    home = root / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    for job, partition in RUNS:
        tags = [] if partition is None else ["--tags", json.dumps({"dagster/partition": partition})]
        ran = subprocess.run(
            [DAGSTER, "job", "execute", "-m", "shop_report", "-a", "defs", "-j", job, *tags],
            cwd=root,
            env=_env(home, root),
            capture_output=True,
            text=True,
            timeout=600,
        )
        # eu's defective rows fail blocking checks, and so its run: the report shows it too.
        finished = "RUN_SUCCESS" if partition != "eu" else "blocking asset checks failed"
        assert finished in ran.stderr, ran.stderr[-3000:]
    yield root


@pytest.fixture(scope="module")
def instance(shop: Path) -> Iterator[dg.DagsterInstance]:
    """The runs' instance, opened as a user's code opens it (`DAGSTER_HOME`)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DAGSTER_HOME", str(shop / "dagster_home"))
        opened = dg.DagsterInstance.get()
    yield opened
    opened.dispose()


def _stored(instance: dg.DagsterInstance) -> list[tuple[str, dg.AssetCheckEvaluation]]:
    """Every check evaluation, oldest first, read run by run from each run's own event log
    (not the query the report makes), with its run's id."""
    found: list[tuple[float, str, dg.AssetCheckEvaluation]] = []
    for run in instance.get_runs():
        for entry in instance.all_logs(
            run.run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION
        ):
            event = entry.dagster_event
            assert event is not None
            found.append((entry.timestamp, run.run_id, event.asset_check_evaluation_data))
    return [(run_id, evaluation) for _, run_id, evaluation in sorted(found, key=lambda f: f[0])]


def _value(evaluation: dg.AssetCheckEvaluation, key: str) -> Any:
    value = evaluation.metadata.get(key)
    return None if value is None else value.value


def _latest(instance: dg.DagsterInstance) -> dict[tuple[str, str], dg.AssetCheckEvaluation]:
    latest: dict[tuple[str, str], dg.AssetCheckEvaluation] = {}
    for _, evaluation in _stored(instance):
        latest[(evaluation.asset_key.to_user_string(), evaluation.check_name)] = evaluation
    return latest


def _verdict(evaluation: dg.AssetCheckEvaluation) -> str:
    if evaluation.passed:
        return "passed"
    return "warned" if evaluation.severity == dg.AssetCheckSeverity.WARN else "failed"


def _current(instance: dg.DagsterInstance) -> dict[tuple[str, str], dg.AssetCheckEvaluation]:
    """Per check, the evaluation its verdict comes from: its latest, and of a partitioned
    check the worst of each partition's latest (the newest of equals)."""
    by_partition: dict[tuple[str, str], dict[str | None, dg.AssetCheckEvaluation]] = {}
    for _, evaluation in _stored(instance):
        key = (evaluation.asset_key.to_user_string(), evaluation.check_name)
        by_partition.setdefault(key, {})[evaluation.partition] = evaluation
    rank = ["passed", "warned", "failed"]
    current = {}
    for key, latest in by_partition.items():
        ordered = list(latest.values())
        current[key] = max(
            reversed(ordered), key=lambda e: rank.index(_verdict(e))
        )  # max keeps the first of equals: the newest
    return current


def _report(shop: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return dagster_dataframely("report", *args, cwd=shop, env=_env(shop / "dagster_home", shop))


def test_every_figure_in_the_json_is_the_evaluations_metadata(
    shop: Path, instance: dg.DagsterInstance
) -> None:
    written = _report(shop, "--format", "json", "--output", "report.json")
    assert written.returncode == 0, written.stderr
    report = json.loads((shop / "report.json").read_text())
    stored = _stored(instance)
    latest = _latest(instance)
    reported = {
        (asset["asset"], check["check"]): check
        for asset in report["assets"]
        for check in asset["checks"]
    }

    assert set(reported) == set(latest)
    for (asset, name), evaluation in latest.items():
        shown = reported[(asset, name)]["latest"]
        assert shown["passed"] is evaluation.passed
        assert shown["severity"] == evaluation.severity.value
        assert shown["partition"] == evaluation.partition
        assert shown["failed_count"] == _value(evaluation, "dy_failed_count")
        assert shown["row_count"] == _value(evaluation, "dy_row_count")
        assert shown["failed_fraction"] == _value(evaluation, "dy_failed_fraction")
        assert shown["tolerance"] == _value(evaluation, "dy_tolerance")
        assert shown["engine"] == _value(evaluation, "dy_engine")
        assert shown["quarantine"] == _value(evaluation, "dy_quarantine")
        assert shown["kept_table"] == _value(evaluation, "dy_failing_rows_table")
        assert shown["kept_query"] == _value(evaluation, "dy_failing_rows")
        history = [
            e for _, e in stored if (e.asset_key.to_user_string(), e.check_name) == (asset, name)
        ]
        plotted = ("dy_failed_count", "dy_row_count", "dy_failed_fraction")
        assert [
            (e["failed_count"], e["row_count"], e["failed_fraction"], e["partition"])
            for e in reported[(asset, name)]["history"]
        ] == [(*(_value(e, key) for key in plotted), e.partition) for e in history]
    for key, evaluation in _current(instance).items():
        assert reported[key]["verdict"] == _verdict(evaluation)
        assert reported[key]["current"]["partition"] == evaluation.partition
        assert reported[key]["current"]["failed_count"] == _value(evaluation, "dy_failed_count")
    runs = {run_id for run_id, _ in stored}
    assert {e["run_id"] for c in reported.values() for e in c["history"]} == runs
    assert report["totals"]["failed"] > 0 and report["totals"]["passed"] > 0


def test_the_partitioned_asset_has_a_grid_of_each_partitions_latest_verdict(
    shop: Path, instance: dg.DagsterInstance
) -> None:
    report = json.loads(dd.check_report(format="json", instance=instance))
    regional = next(asset for asset in report["assets"] if asset["asset"] == "regional")
    expected: dict[str, dict[str, str]] = {}
    for _, evaluation in _stored(instance):
        if evaluation.asset_key == dg.AssetKey("regional"):
            verdict = (
                "passed"
                if evaluation.passed
                else "warned"
                if evaluation.severity == dg.AssetCheckSeverity.WARN
                else "failed"
            )
            assert evaluation.partition is not None
            expected.setdefault(evaluation.partition, {})[evaluation.check_name] = verdict

    assert regional["partitioned"] is True
    assert regional["partitions"]["verdicts"] == expected
    # eu has defective rows, us none: the asset fails though its latest run (us) passed.
    assert "failed" in expected["eu"].values()
    assert set(expected["us"].values()) == {"passed"}
    assert regional["verdict"] == "failed"
    assert [point["rows"] for point in regional["row_counts"]] == [13, 3]


def test_a_partition_filter_keeps_only_that_partitions_evaluations(
    instance: dg.DagsterInstance,
) -> None:
    report = json.loads(dd.check_report(format="json", instance=instance, partition="us"))

    assert [asset["asset"] for asset in report["assets"]] == ["regional"]
    evaluations = [e for c in report["assets"][0]["checks"] for e in c["history"]]
    assert evaluations and {e["partition"] for e in evaluations} == {"us"}
    assert report["filters"]["partition"] == "us"


def test_the_markdown_lists_each_failing_check_and_counts_the_passing_ones(
    shop: Path, instance: dg.DagsterInstance
) -> None:
    written = _report(shop, "--format", "markdown")
    assert written.returncode == 0, written.stderr
    sections = re.split(r"^## ", written.stdout, flags=re.MULTILINE)[1:]
    by_asset = {section.split(":")[0]: section for section in sections}
    current = _current(instance)

    for (asset, name), evaluation in current.items():
        lines = by_asset[asset].splitlines()
        rows = [line for line in lines if line.startswith(f"| `{name}` |")]
        if _verdict(evaluation) == "passed":
            assert rows == []
            continue
        (row,) = rows
        failed, checked = _value(evaluation, "dy_failed_count"), _value(evaluation, "dy_row_count")
        assert f"| {failed:,} of {checked:,} rows" in row
        assert f"| {_value(evaluation, 'dy_tolerance')} |" in row
        assert f"| {_value(evaluation, 'dy_engine')} |" in row
        kept = _value(evaluation, "dy_quarantine") or _value(evaluation, "dy_failing_rows_table")
        if kept:
            assert f"`{kept}`" in row
    for asset, section in by_asset.items():
        passed = sum(1 for (a, _), e in current.items() if a == asset and e.passed)
        assert re.search(rf"passed: {passed} (other )?checks\.", section), section
    assert "| Partition | " in written.stdout


def _chromium() -> str:
    found = shutil.which("chromium")
    if found is None:
        pytest.fail(
            "The report's HTML is checked in Debian's headless chromium, which is not "
            "installed: `sudo apt-get install chromium` (the package .ci/run installs)."
        )
    return found


#: Headless, no network (every host unresolvable), and the page's console on stderr.
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--virtual-time-budget=2000",
]


def _opened(page: Path) -> tuple[str, str]:
    """The DOM chromium rendered from `page` and what it logged: network off, console on."""
    ran = subprocess.run(
        [_chromium(), *CHROMIUM_FLAGS, "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    return ran.stdout, ran.stderr


#: What chromium logs for a page's console message, or a request its policy refused.
_CONSOLE = re.compile(r":CONSOLE[:(]\d+|Content Security Policy|Refused to")


def test_the_html_opens_offline_in_chromium_with_every_checks_figures(
    shop: Path, instance: dg.DagsterInstance
) -> None:
    written = _report(shop, "--output", "report.html")
    assert written.returncode == 0, written.stderr
    page = shop / "report.html"
    dom, log = _opened(page)

    assert not _CONSOLE.search(log), log
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", dom)).replace("&nbsp;", " ")
    for (_, name), evaluation in _current(instance).items():
        assert name in text
        failed, rows = _value(evaluation, "dy_failed_count"), _value(evaluation, "dy_row_count")
        if failed is not None:
            assert f"{failed:,} of {rows:,} rows" in text
    assert dom.count("<svg") >= len(_latest(instance))
    assert "Partitions \u00d7 checks" in text
    assert "The schema's columns and rules" in text and "order_id" in text


def test_a_request_from_the_html_would_be_refused_and_seen(shop: Path) -> None:
    """The browser check above can fail: the same report with one remote image is refused
    by its own policy, and chromium says so."""
    page = shop / "report.html"
    if not page.exists():
        assert _report(shop, "--output", "report.html").returncode == 0
    fetching = shop / "fetching.html"
    fetching.write_text(
        page.read_text().replace("<body>", '<body><img src="https://example.com/a.png">')
    )

    _, log = _opened(fetching)

    assert _CONSOLE.search(log), log


def test_no_instance_is_an_error_naming_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    with pytest.raises(InstanceNotFoundError, match=r"DAGSTER_HOME is not set.*--instance DIR"):
        dd.check_report()
    missing = dagster_dataframely("report", "--instance", str(tmp_path / "gone"), cwd=tmp_path)
    assert missing.returncode == 1
    assert "does not exist" in missing.stderr and str(tmp_path / "gone") in missing.stderr


def test_an_empty_instance_is_an_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    ran = dagster_dataframely("report", "--instance", str(tmp_path), cwd=tmp_path)

    assert ran.returncode == 1
    assert "holds no check evaluation" in ran.stderr and str(tmp_path) in ran.stderr


def test_a_directory_that_is_no_instance_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    ran = dagster_dataframely("report", "--instance", str(tmp_path), cwd=tmp_path)

    assert ran.returncode == 1
    assert "holds neither dagster.yaml nor history/" in ran.stderr
    assert list(tmp_path.iterdir()) == []


def test_settings_the_report_cannot_take_are_refused(instance: dg.DagsterInstance) -> None:
    with pytest.raises(InvalidSettingError, match="since='last week' is neither an age"):
        dd.check_report(instance=instance, since="last week")
    with pytest.raises(InvalidSettingError, match=r"last=0\)"):
        dd.check_report(instance=instance, last=0)
    one = json.loads(dd.check_report(format="json", instance=instance, last=1))
    assert {len(check["history"]) for a in one["assets"] for check in a["checks"]} == {1}


def test_a_time_window_after_every_run_is_an_error(instance: dg.DagsterInstance) -> None:
    with pytest.raises(NoCheckHistoryError, match="since 2100-01-01"):
        dd.check_report(instance=instance, since="2100-01-01")
    assert json.loads(dd.check_report(format="json", instance=instance, since="1d"))["assets"]


def test_a_selection_matching_nothing_names_the_closest_keys(
    instance: dg.DagsterInstance,
) -> None:
    with pytest.raises(UnmatchedSelectionError, match=r"'key:ordrs'.*closest.*orders"):
        dd.check_report(instance=instance, select="key:ordrs")
    with pytest.raises(UnmatchedSelectionError, match=r"needs the asset graph.*--defs"):
        dd.check_report(instance=instance, select="group:regions")
    with pytest.raises(UnmatchedSelectionError, match="not in Dagster's selection syntax"):
        dd.check_report(instance=instance, select="orders or regional")
    with pytest.raises(UnmatchedSelectionError, match=r"'nope' matches no asset"):
        dd.check_report(instance=instance, select="nope")

    def selected(selection: str) -> list[str]:
        report = json.loads(dd.check_report(format="json", instance=instance, select=selection))
        return [asset["asset"] for asset in report["assets"]]

    assert selected("orders") == ["orders"]
    assert selected("not key:orders") == ["regional"]
    assert sorted(selected("key:orders or key:regional")) == ["orders", "regional"]


def test_with_the_definitions_a_selection_resolves_against_the_asset_graph(shop: Path) -> None:
    ran = _report(
        shop, "--format", "json", "--defs", "shop_report:defs", "--select", "group:regions"
    )

    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout)
    assert [asset["asset"] for asset in report["assets"]] == ["regional"]
    # The sidecar's asset records no columns: they come from the definitions (with_schemas).
    assert [column["name"] for column in report["assets"][0]["columns"]][:2] == [
        "order_id",
        "line",
    ]


def test_the_pages_python_example_writes_the_report(
    shop: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/report.md's example, run against the runs' instance as DAGSTER_HOME."""
    page = (Path(__file__).parents[1] / "docs" / "report.md").read_text()
    (block,) = re.findall(r"^```python\n(.*?)^```", page, re.S | re.M)
    monkeypatch.setenv("DAGSTER_HOME", str(shop / "dagster_home"))
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}

    exec(compile(block, "docs/report.md", "exec"), namespace)

    assert "<h2>orders " in (tmp_path / "quality.html").read_text()
    assert namespace["pull_request"].count("\n## ") == 1  # orders only
