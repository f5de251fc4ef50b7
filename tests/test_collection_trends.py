"""Trends of a collection's members, in real runs over one persistent Dagster instance: each
member with its own schema checks gets `dy_table__trends`, which passes while the history is
short, then flags the member's row count, a rule's failing fraction or the share of its rows a
filter removes outside the median ± k * MAD of its last evaluations. A run that selects the
trend alone still judges every filter (a figure left out would read as 0 in the history); a
member checked elsewhere (`skip_schema_checks`) gets no trend here; `dd.with_schemas` and a
Component entry take `trends` for collections too."""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
import os
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest
from dagster.components.testing import DefsFolderSandbox
from shop import OrderLines, Orders, Shop
from support import dg_launch, scaffold_checks

import dagster_dataframely as dd

TRENDS = "dy_table__trends"
FILTER = "dy_filter__order_has_lines"
WARN, ERROR = dg.AssetCheckSeverity.WARN, dg.AssetCheckSeverity.ERROR
ASSETS = {"customers": "customers", "orders": "orders", "lines": "order_lines"}


def shop(orders: int, *, without_lines: int = 0, negative: int = 0) -> dict[str, pl.DataFrame]:
    """`orders` orders of customer 1, one line each except the first `without_lines` (which
    the filter `order_has_lines` removes), the last `negative` with a negative amount."""
    return {
        "customers": pl.DataFrame({"customer_id": [1], "name": ["Ada"]}),
        "orders": pl.DataFrame(
            {
                "order_id": range(orders),
                "customer_id": [1] * orders,
                "amount": [-1.0 if i >= orders - negative else 5.0 for i in range(orders)],
            },
            schema=Orders.create_empty().schema,
        ),
        "lines": pl.DataFrame(
            {
                "order_id": range(without_lines, orders),
                "line_no": [1] * (orders - without_lines),
                "quantity": [1] * (orders - without_lines),
            },
            schema=OrderLines.create_empty().schema,
        ),
    }


def job(frames: dict[str, pl.DataFrame], *, name: str = "shop_checks", **settings: Any) -> Any:
    """The collection's checks over three declared assets, each member read from `frames`
    (which a test changes between runs), as a checks job; `name="orders_trend"` selects the
    trend of `orders` alone."""

    def reader(member: str) -> Any:
        def read(context: dg.AssetCheckExecutionContext) -> pl.DataFrame:
            return frames[member]

        return read

    checks = dd.collection_checks(
        Shop, members=ASSETS, sources={m: reader(m) for m in ASSETS}, **settings
    )
    alone = dg.AssetSelection.checks(dg.AssetCheckKey(dg.AssetKey("orders"), TRENDS))
    defs = dg.Definitions(
        assets=[dg.AssetSpec(key) for key in ASSETS.values()],
        asset_checks=[checks],
        jobs=[
            dd.checks_job(checks, name="shop_checks"),
            dg.define_asset_job("orders_trend", selection=alone),
        ],
    )
    return defs.resolve_job_def(name)


def trends(found: Any, instance: dg.DagsterInstance, **run: Any) -> dict[str, Any]:
    """asset -> its trend evaluation, of one run of the job `found`."""
    result = found.execute_in_process(instance=instance, raise_on_error=False, **run)
    return {
        e.asset_key.to_user_string(): e
        for e in result.get_asset_check_evaluations()
        if e.check_name == TRENDS
    }


@pytest.fixture
def instance(tmp_path: Path) -> Any:
    with dg.DagsterInstance.local_temp(str(tmp_path)) as found:
        yield found


def test_each_member_passes_a_short_history_and_says_how_many_runs_it_needs(
    instance: dg.DagsterInstance,
) -> None:
    found = job(shop(100), trends=dd.Trends(min_history=3))

    first, second = (trends(found, instance) for _ in range(2))

    assert set(first) == set(ASSETS.values())
    assert all(e.passed for e in [*first.values(), *second.values()])
    assert first["orders"].metadata["dy_assessment"].value == (
        "passed: 0 of the 3 evaluations a trend needs are in the history, 3 more needed"
    )
    assert second["order_lines"].metadata["dy_history"].value == 1


def test_a_filter_removing_a_jump_of_a_members_rows_is_flagged_on_that_member(
    instance: dg.DagsterInstance,
) -> None:
    frames: dict[str, pl.DataFrame] = {}
    found = job(frames, trends=dd.Trends(window=4, min_history=4, severity="error"))
    for missing in (1, 2, 1, 1):  # about 1% of 100 orders have no line
        frames.update(shop(100, without_lines=missing))
        assert all(e.passed for e in trends(found, instance).values())

    frames.update(shop(100, without_lines=30))
    jumped = trends(found, instance)

    orders = jumped["orders"]
    assert (orders.passed, orders.severity) == (False, ERROR)
    assert f"{FILTER} failing on 30.0000% of rows" in orders.metadata["dy_assessment"].value
    assert orders.metadata["dy_trend_figures"].value[FILTER] == 0.3
    # 70 lines instead of 99-ish: the lines' own row count left its band
    assert not jumped["order_lines"].passed
    assert jumped["customers"].passed


def test_a_members_row_count_and_rule_fraction_are_judged_against_its_own_history(
    instance: dg.DagsterInstance,
) -> None:
    frames: dict[str, pl.DataFrame] = {}
    found = job(frames, trends=dd.Trends(window=3, min_history=3))
    for rows in (100, 102, 98):
        frames.update(shop(rows, negative=1))
        trends(found, instance)

    frames.update(shop(100, negative=20))
    judged = trends(found, instance)

    assert (judged["orders"].passed, judged["orders"].severity) == (False, WARN)
    rows = judged["orders"].metadata["dy_trends"].records  # type: ignore[attr-defined]
    assert [row.data["figure"] for row in rows] == ["amount|min"]
    assert judged["orders"].metadata["dy_row_count"].value == 100


def test_a_run_of_the_trend_alone_still_judges_every_filter(
    instance: dg.DagsterInstance,
) -> None:
    frames = shop(100, without_lines=2)
    every = dd.Trends(window=3, min_history=3)
    for _ in range(3):
        trends(job(frames, trends=every), instance)

    alone = trends(job(frames, name="orders_trend", trends=every), instance)

    assert set(alone) == {"orders"}
    assert alone["orders"].passed, alone["orders"].metadata["dy_assessment"]
    assert alone["orders"].metadata["dy_trend_figures"].value[FILTER] == 0.02


def test_a_member_checked_elsewhere_gets_no_trend_from_the_collection() -> None:
    checks = dd.collection_checks(
        Shop, members=ASSETS, skip_schema_checks=["orders"], trends=dd.Trends()
    )

    trended = {key.asset_key.to_user_string() for key in checks.check_keys if key.name == TRENDS}

    assert trended == {"customers", "order_lines"}


def test_with_schemas_gives_every_asset_its_trend_collection_members_included() -> None:
    defs = dg.Definitions(assets=[dg.AssetSpec(key) for key in ASSETS.values()])

    checked = dd.with_schemas(
        defs,
        {"orders": Orders, Shop: ASSETS},
        source=lambda context: pl.DataFrame(),
        trends=dd.Trends(window=10),
    )

    trended = [
        key.asset_key.to_user_string()
        for checks in checked.asset_checks or []
        for key in checks.check_keys
        if key.name == TRENDS
    ]
    assert sorted(trended) == ["customers", "order_lines", "orders"]


@pytest.fixture
def sandbox() -> Any:
    from dagster.components.testing import create_defs_folder_sandbox

    with create_defs_folder_sandbox() as found:
        yield found


def test_a_component_collection_entry_takes_trends(sandbox: DefsFolderSandbox) -> None:
    (sandbox.defs_folder_path / "assets.py").write_text(
        "import dagster as dg\n\n"
        "customers, orders, order_lines = (dg.AssetSpec(k) for k in "
        "('customers', 'orders', 'order_lines'))\n"
    )
    entry = {
        "collection": "shop:Shop",
        "members": ASSETS,
        "trends": {"window": 10, "k": 4, "severity": "error"},
    }
    scaffold_checks(sandbox, {"checks": [], "collections": [entry]})

    with sandbox.build_component_tree() as tree:
        defs = tree.build_defs()

    specs = [
        spec
        for checks in defs.asset_checks or []
        for spec in checks.check_specs
        if spec.name == TRENDS
    ]
    assert sorted(spec.asset_key.to_user_string() for spec in specs) == sorted(ASSETS.values())
    assert all(spec.blocking for spec in specs)
    assert "median ± 4 * MAD of the last 10 evaluations" in (specs[0].description or "")


LOCATION = """\
from pathlib import Path

import dagster as dg
import polars as pl
from shop import Shop

import dagster_dataframely as dd

MEMBERS = {"customers": "customers", "orders": "orders", "lines": "order_lines"}
HERE = Path(__file__).parent


def read(member):
    def frame(context: dg.AssetCheckExecutionContext) -> pl.DataFrame:
        return pl.read_parquet(HERE / f"{member}.parquet")

    return frame


checks = dd.collection_checks(
    Shop,
    members=MEMBERS,
    sources={member: read(member) for member in MEMBERS},
    trends=dd.Trends(min_history=3),
)
defs = dg.Definitions(
    assets=[dg.AssetSpec(key) for key in MEMBERS.values()],
    asset_checks=[checks],
    jobs=[dd.checks_job(checks, name="shop_checks")],
)
"""


def test_the_cli_judges_each_member_from_the_history_its_home_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three runs in process, then one from `dg launch` (the multiprocess executor) over the
    same DAGSTER_HOME: the step's own process reads each member's history."""
    tests = str(Path(__file__).parent)  # the location imports the tests' `shop`
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [tests, os.environ.get("PYTHONPATH")]))
    )
    (tmp_path / "location.py").write_text(LOCATION)
    home = tmp_path / "home"
    home.mkdir()

    def store(frames: dict[str, pl.DataFrame]) -> None:
        for member, frame in frames.items():
            frame.write_parquet(tmp_path / f"{member}.parquet")

    store(shop(100, without_lines=1))
    with dg.DagsterInstance.from_config(str(home)) as instance:
        for _ in range(3):
            trends(job(shop(100, without_lines=1), trends=dd.Trends(min_history=3)), instance)
    store(shop(100, without_lines=40))
    launched, _ = dg_launch(tmp_path, "shop_checks")

    # the run fails: 40 orders without lines fail the blocking filter check as well
    assert "dy_filter__order_has_lines" in launched.stdout + launched.stderr
    with dg.DagsterInstance.from_config(str(home)) as instance:
        latest = instance.get_runs(limit=1)[0]
        logged = instance.all_logs(latest.run_id)
    assert any("multiprocess executor" in e.message for e in logged)
    evaluations = [
        e.dagster_event.event_specific_data  # type: ignore[union-attr]
        for e in logged
        if e.dagster_event_type == dg.DagsterEventType.ASSET_CHECK_EVALUATION
    ]
    judged = {e.asset_key.to_user_string(): e for e in evaluations if e.check_name == TRENDS}
    assert judged["orders"].metadata["dy_history"].value == 3
    assert (judged["orders"].passed, judged["orders"].severity) == (False, WARN)
    assert (
        f"{FILTER} failing on 40.0000% of rows" in judged["orders"].metadata["dy_assessment"].value
    )
    assert judged["customers"].passed and not judged["order_lines"].passed  # 60 lines, not 99
