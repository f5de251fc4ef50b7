"""The gated asset's circuit breaker, in real runs: with a quarantine, the rows failing an
`"error"` rule go to the quarantine while the rule is within its error tolerance and the table
is written; above it the run fails with `ValidationAbortError`, the quarantine written and the
table left as it was. Without a quarantine a tolerance on an `"error"` rule is refused when the
asset is defined; one on a `"warn"` rule is not. Each run returns a `pl.DataFrame` and a
`pl.LazyFrame` scan (which the gate never collects); the breaker is also checked against
Dataframely's own counts (a property test) and in a CLI run with the multiprocess executor."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from support import evaluations, materialization, materialized, step_error

import dagster_dataframely as dd
from dagster_dataframely.errors import InvalidToleranceError

ERROR, WARN = dg.AssetCheckSeverity.ERROR, dg.AssetCheckSeverity.WARN
AMOUNT, EMAIL = "dy_rule__amount__min", "dy_rule__email__regex"


@dd.tolerate("amount|min", warn_above=2, error_above="10%")
class Payments(dy.Schema):
    id = dy.Int64(primary_key=True)
    email = dy.String(nullable=True, regex="@")
    amount = dy.Int64(min=0)


@dd.warn("email")
@dd.tolerate("email", warn_above=5)
class Contacts(dy.Schema):
    """A `"warn"` rule with a tolerance, and `"error"` rules without one."""

    id = dy.Int64(primary_key=True)
    email = dy.String(nullable=True, regex="@")
    amount = dy.Int64(min=0)


def payments(negative: int, bad_emails: int = 0, rows: int = 100) -> pl.DataFrame:
    """`rows` payments: the last `negative` below 0, the first `bad_emails` without an `@`."""
    return pl.DataFrame(
        {
            "id": range(rows),
            "email": [f"p{i}" if i < bad_emails else f"p{i}@shop.eu" for i in range(rows)],
            "amount": [-1 if i >= rows - negative else i for i in range(rows)],
        },
        schema={"id": pl.Int64, "email": pl.String, "amount": pl.Int64},
    )


def materialize(
    tmp_path: Path, frame: pl.DataFrame, kind: str, schema: Any = Payments, **settings: Any
) -> dg.ExecuteInProcessResult:
    """One run of `payments` returning `frame` (as a DataFrame, or as a scan of a parquet
    file), stored by `dd.ParquetIOManager` under `tmp_path / "store"`."""
    source = tmp_path / f"source-{len(list(tmp_path.glob('source-*')))}.parquet"
    frame.write_parquet(source)

    @dd.asset(schema, name="payments", **settings)
    def asset() -> pl.DataFrame | pl.LazyFrame:
        return pl.scan_parquet(source) if kind == "lazy" else frame

    return dg.materialize(
        [asset],
        resources={"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path / "store"))},
        raise_on_error=False,
    )


def stored(tmp_path: Path, name: str) -> pl.DataFrame:
    return pl.read_parquet(tmp_path / "store" / f"{name}.parquet")


KINDS = pytest.mark.parametrize("kind", ["eager", "lazy"])


@KINDS
def test_within_its_error_tolerance_the_rows_are_quarantined_and_the_table_written(
    tmp_path: Path, kind: str
) -> None:
    frame = payments(negative=6)  # 6% of the rows: above warn (2 rows), within error (10%)

    result = materialize(tmp_path, frame, kind, quarantine=True)

    assert result.success
    assert_frame_equal(stored(tmp_path, "payments"), frame.head(94))
    assert stored(tmp_path, "payments_quarantine")["id"].to_list() == list(range(94, 100))
    amount = evaluations(result)[AMOUNT]
    assert (amount.passed, amount.severity) == (False, WARN)
    assert amount.metadata["dy_failed_count"].value == 6
    assert amount.metadata["dy_failed_fraction"] == dg.MetadataValue.float(0.06)
    assert amount.metadata["dy_tolerance"].value == "warn above 2 rows, error above 10%"
    assert amount.metadata["dy_tolerance_margin"].value == -4  # 4 rows above the warn limit
    assert materialization(result, "payments")["dy_quarantined_rows"] == 6


@KINDS
def test_above_its_error_tolerance_the_run_fails_with_the_quarantine_written_and_the_table_kept(
    tmp_path: Path, kind: str
) -> None:
    assert materialize(tmp_path, payments(negative=1), kind, quarantine=True).success
    before = stored(tmp_path, "payments")

    result = materialize(tmp_path, payments(negative=30), kind, quarantine=True)

    assert not result.success
    name, message = step_error(result)
    assert name == "ValidationAbortError"
    assert "amount|min: 30 of 100 row(s) failed; tolerance: warn above 2 rows, error above 10%" in (
        message
    )
    assert "circuit breaker" in message and "raise error_above=" in message
    assert_frame_equal(stored(tmp_path, "payments"), before)  # not written: the old rows stay
    assert stored(tmp_path, "payments_quarantine")["id"].to_list() == list(range(70, 100))
    assert materialized(result) == {"payments_quarantine"}
    amount = evaluations(result)[AMOUNT]
    assert (amount.passed, amount.severity) == (False, ERROR)
    assert amount.metadata["dy_failed_fraction"] == dg.MetadataValue.float(0.3)
    assert amount.metadata["dy_tolerance_margin"].value == -20  # 20 rows above 10% of 100
    assert "the table was not written" in amount.metadata["dy_failed_rows"].value


@KINDS
def test_an_error_rule_without_a_tolerance_still_quarantines_its_rows_beside_a_tolerated_one(
    tmp_path: Path, kind: str
) -> None:
    """Only a tolerated rule trips the breaker: `email|regex`, which has no tolerance, sends
    its 40 rows to the quarantine as any quarantined asset does."""
    frame = payments(negative=5, bad_emails=40)

    result = materialize(tmp_path, frame, kind, quarantine=True)

    assert result.success
    assert stored(tmp_path, "payments").height == 55
    assert stored(tmp_path, "payments_quarantine").height == 45
    email = evaluations(result)[EMAIL]
    assert (email.passed, email.severity) == (False, WARN)  # quarantined: the table is clean


@KINDS
def test_a_tolerance_for_one_asset_trips_the_breaker_the_schema_would_not(
    tmp_path: Path, kind: str
) -> None:
    strict = {"amount|min": dd.Tolerance(error_above=3)}

    result = materialize(tmp_path, payments(negative=6), kind, quarantine=True, tolerate=strict)

    assert not result.success
    assert step_error(result)[0] == "ValidationAbortError"
    assert not (tmp_path / "store" / "payments.parquet").exists()
    assert stored(tmp_path, "payments_quarantine").height == 6


@KINDS
def test_a_warn_rules_tolerance_needs_no_quarantine(tmp_path: Path, kind: str) -> None:
    frame = payments(negative=0, bad_emails=3)

    result = materialize(tmp_path, frame, kind, schema=Contacts)

    assert result.success
    # every row written: the valid rows, then those failing only the "warn" rule
    assert_frame_equal(stored(tmp_path, "payments"), pl.concat([frame.slice(3), frame.head(3)]))
    email = evaluations(result)[EMAIL]
    assert email.passed
    assert email.metadata["dy_failed_count"].value == 3
    assert email.metadata["dy_tolerance"].value == "warn above 5 rows"
    assert email.metadata["dy_tolerance_margin"].value == 2


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    negative=st.integers(0, 40),
    bad_emails=st.integers(0, 40),
    limit=st.one_of(st.integers(0, 40), st.sampled_from(["0%", "5%", "12.5%", "30%", "100%"])),
)
def test_the_breaker_trips_exactly_when_dataframely_counts_more_rows_than_the_tolerance(
    tmp_path_factory: pytest.TempPathFactory, negative: int, bad_emails: int, limit: Any
) -> None:
    tmp_path = tmp_path_factory.mktemp("breaker")
    frame = payments(negative=negative, bad_emails=bad_emails)
    _, failure = Payments.filter(frame, cast=False)
    counts = failure.counts()
    tolerance = dd.Tolerance(error_above=limit)
    assert tolerance.error_above is not None
    allowed = tolerance.error_above.rows(frame.height)

    result = materialize(
        tmp_path, frame, "eager", quarantine=True, tolerate={"amount|min": tolerance}
    )

    trips = counts.get("amount|min", 0) > allowed
    invalid = frame.height - Payments.filter(frame, cast=False)[0].height
    assert result.success is (not trips and invalid < frame.height)
    assert stored(tmp_path, "payments_quarantine").height == invalid
    table = tmp_path / "store" / "payments.parquet"
    assert table.exists() is (not trips and invalid < frame.height)
    if trips:
        assert step_error(result)[0] == "ValidationAbortError"


def test_without_a_quarantine_an_error_rules_tolerance_is_refused_at_definition() -> None:
    with pytest.raises(InvalidToleranceError) as refused:
        dd.asset(Payments)(lambda: payments(negative=0))
    message = str(refused.value)
    assert "amount|min (warn above 2 rows, error above 10%)" in message
    assert "dy.DataFrame[Payments]" in message and "quarantine=True" in message

    tolerate = {"email": dd.Tolerance(warn_above=1), "amount": dd.Tolerance(warn_above=2)}
    with pytest.raises(InvalidToleranceError, match=r"'error' rules .*: email\|regex \(warn"):
        dd.asset(Payments, warn="amount", tolerate=tolerate)(lambda: payments(negative=0))


def test_a_quarantine_or_a_warn_rule_makes_the_tolerance_acceptable() -> None:
    def orders() -> None:
        return None

    lenient = {"amount": dd.Tolerance(warn_above=2)}
    for accepted in (
        dd.asset(Payments, quarantine=True),
        dd.asset(Payments, warn="amount", tolerate=lenient),
        dd.asset(Contacts),
    ):
        assert isinstance(accepted(orders), dg.AssetsDefinition)


# ------------------------- the CLI, each step in its own process ------------------------- #

CLI_DEFS = """
import os
import dagster as dg
import dataframely as dy
import polars as pl
import dagster_dataframely as dd

@dd.tolerate("amount|min", error_above="10%")
class Payments(dy.Schema):
    id = dy.Int64(primary_key=True)
    amount = dy.Int64(min=0)

@dd.asset(Payments, quarantine=True)
def payments() -> pl.LazyFrame:
    return pl.scan_parquet(os.environ["SHOP_SOURCE"])

@dg.asset(deps=["payments"])
def payment_count(payments: pl.LazyFrame) -> pl.DataFrame:
    return payments.select(pl.len()).collect()

defs = dg.Definitions(
    assets=[payments, payment_count],
    resources={"io_manager": dd.ParquetIOManager(base_dir=os.environ["SHOP_WAREHOUSE"])},
)
"""


def test_the_breaker_stops_a_cli_run_with_the_multiprocess_executor(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "shop_defs.py").write_text(CLI_DEFS)
    source = tmp_path / "source.parquet"
    payments(negative=30).drop("email").write_parquet(source)
    env = {
        **os.environ,
        "DAGSTER_HOME": str(tmp_path / "home"),
        "SHOP_SOURCE": str(source),
        "SHOP_WAREHOUSE": str(tmp_path / "store"),
    }
    command = [sys.executable, "-m", "dagster", "asset", "materialize", "-f", "shop_defs.py"]

    done = subprocess.run(
        [*command, "--select", "payments*"], cwd=tmp_path, env=env, capture_output=True, text=True
    )

    assert done.returncode != 0
    assert "multiprocess" in done.stderr
    assert "ValidationAbortError" in done.stderr and "circuit breaker" in done.stderr
    assert stored(tmp_path, "payments_quarantine").height == 30
    assert not (tmp_path / "store" / "payments.parquet").exists()
    assert not (tmp_path / "store" / "payment_count.parquet").exists()  # downstream never ran
