"""A Pandera polars model works wherever a schema goes, in real runs: the sidecar, the
Columns tab of `with_schemas`, the gated `dd.asset`, the Component and `dd.wiring`, with the
check names its migrated Dataframely schema will have, and with data checks on a LazyFrame."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg
import pandera.polars as pa
import polars as pl
import pytest
from dagster.components.testing import DefsFolderSandbox
from pandera.api.polars.types import PolarsData
from pandera.config import ValidationDepth, config_context
from pandera.errors import SchemaErrors, SchemaWarning
from pandera_support import load
from support import failed, logs, materialized, scaffold_checks, step_error

import dagster_dataframely as dd
from dagster_dataframely.errors import ValidationAbortError
from dagster_dataframely.pandera import migrate

ERROR, WARN = dg.AssetCheckSeverity.ERROR, dg.AssetCheckSeverity.WARN


class Payments(pa.DataFrameModel):
    """Card payments, one row per payment."""

    payment_id: int = pa.Field(ge=1, unique=True, description="The payment number")
    currency: str = pa.Field(isin=["EUR", "USD"], description="ISO 4217 currency code")
    amount: float = pa.Field(gt=0, description="Amount charged, in the currency")
    reference: str = pa.Field(
        nullable=True, str_length={"max_value": 8}, raise_warning=True, description="Free text"
    )

    @pa.dataframe_check
    def usd_has_reference(cls, data: PolarsData) -> pl.LazyFrame:
        """A USD payment carries a reference."""
        return data.lazyframe.select(
            (pl.col("currency") != "USD") | pl.col("reference").is_not_null()
        )


#: The same columns as a `DataFrameSchema` object, built-in checks only.
payments_schema = pa.DataFrameSchema(
    {
        "payment_id": pa.Column(int, pa.Check.ge(1), unique=True),
        "currency": pa.Column(str, pa.Check.isin(["EUR", "USD"])),
        "amount": pa.Column(float, pa.Check.gt(0)),
        "reference": pa.Column(
            str, pa.Check.str_length(max_value=8, raise_warning=True), nullable=True
        ),
    },
    name="payments",
)

#: This module's models as the Component and migrated source reach them.
MODULE = __name__


def valid_payments() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "payment_id": [1, 2, 3],
            "currency": ["EUR", "USD", "EUR"],
            "amount": [10.0, 2.5, 99.0],
            "reference": [None, "inv-7", "inv-8"],
        }
    )


def warn_only_payments() -> pl.DataFrame:
    """Valid, but for one reference longer than 8 characters (a warning check)."""
    return valid_payments().with_columns(
        reference=pl.Series(["a reference too long", "inv-7", None])
    )


def defective_payments() -> pl.DataFrame:
    """Two valid rows, then rows that fail error checks, and one that fails only a warning."""
    return pl.DataFrame(
        {
            "payment_id": [1, 2, 3, 4, 4, 6],
            "currency": ["EUR", "USD", "GBP", "EUR", "EUR", "EUR"],
            "amount": [10.0, 2.5, 5.0, -1.0, 3.0, 4.0],
            "reference": ["inv-1", "inv-2", None, None, "inv-5", "far too long"],
        }
    )


#: Failing rows of `defective_payments()` per check, with the check's severity.
DEFECTIVE_FAILED = {
    "dy_rule__currency__check__isin": (1, ERROR),
    "dy_rule__amount__min_exclusive": (1, ERROR),
    "dy_rule__payment_id__unique": (2, ERROR),
    "dy_rule__reference__check__str_length": (1, WARN),
}
VALID_IDS = [1, 2, 6]  # `defective_payments()` rows failing no error check


@dg.asset(deps=["payments"])
def downstream() -> pl.DataFrame:
    return pl.DataFrame({"total": [1]})


def _payments_asset(frame: pl.DataFrame) -> dg.AssetsDefinition:
    @dg.asset(name="payments")
    def payments() -> pl.DataFrame:
        return frame

    return payments


def _materialize(
    assets: list[Any], tmp_path: Path, instance: dg.DagsterInstance | None = None
) -> dg.ExecuteInProcessResult:
    """A run storing its assets as parquet under `tmp_path` (`dd.ParquetIOManager`)."""
    return dg.materialize(
        assets,
        resources={"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path))},
        instance=instance or dg.DagsterInstance.ephemeral(),
        raise_on_error=False,
    )


# ------------------------------------ dd.schema_checks ------------------------------------ #


def test_a_warning_check_reports_warn_and_does_not_block_downstream(tmp_path: Path) -> None:
    checks = dd.schema_checks(Payments, asset="payments")
    result = _materialize([_payments_asset(warn_only_payments()), downstream, checks], tmp_path)

    assert result.success
    assert failed(result) == {"dy_rule__reference__check__str_length": (1, WARN)}
    assert materialized(result) == {"payments", "downstream"}


def test_an_error_check_blocks_downstream(tmp_path: Path) -> None:
    checks = dd.schema_checks(Payments, asset="payments")
    result = _materialize([_payments_asset(defective_payments()), downstream, checks], tmp_path)

    assert not result.success
    assert failed(result) == DEFECTIVE_FAILED
    assert materialized(result) == {"payments"}


def test_a_lazy_input_gets_its_data_checked_where_pandera_checks_only_its_schema(
    tmp_path: Path,
) -> None:
    checks = dd.schema_checks(Payments, asset="payments")
    instance = dg.DagsterInstance.ephemeral()
    result = _materialize([_payments_asset(defective_payments()), checks], tmp_path, instance)

    assert any(
        "as a polars.LazyFrame; evaluating streaming" in line for line in logs(instance, result)
    )
    assert failed(result) == DEFECTIVE_FAILED
    # Pandera, given the same scan, checks only its schema unless told to go deeper; then it
    # finds the rows the sidecar counted.
    scan = pl.scan_parquet(tmp_path / "payments.parquet")
    Payments.validate(scan, lazy=True)
    with (
        config_context(validation_depth=ValidationDepth.SCHEMA_AND_DATA),
        pytest.warns(SchemaWarning, match="'reference' failed"),
        pytest.raises(SchemaErrors) as raised,
    ):
        Payments.validate(scan, lazy=True)
    rejected = raised.value.failure_cases.group_by("column").len()
    assert dict(rejected.iter_rows()) == {"payment_id": 2, "currency": 1, "amount": 1}


# ------------------------------------- dd.with_schemas ------------------------------------- #


def test_with_schemas_fills_the_columns_tab_from_the_model(tmp_path: Path) -> None:
    defs = dd.with_schemas(
        dg.Definitions(
            assets=[_payments_asset(defective_payments())],
            resources={"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path))},
        ),
        {"payments": Payments},
        blocking=False,
    )

    spec = defs.get_assets_def("payments").specs_by_key[dg.AssetKey("payments")]
    columns = {c.name: c for c in spec.metadata["dagster/column_schema"].columns}
    assert {name: c.description for name, c in columns.items()} == {
        "payment_id": "The payment number",
        "currency": "ISO 4217 currency code",
        "amount": "Amount charged, in the currency",
        "reference": "Free text",
    }
    assert columns["payment_id"].constraints.unique
    assert columns["reference"].constraints.nullable
    result = defs.resolve_implicit_global_asset_job_def().execute_in_process(
        instance=dg.DagsterInstance.ephemeral()
    )
    assert result.success
    assert failed(result) == DEFECTIVE_FAILED


# ---------------------------------------- dd.asset ---------------------------------------- #


def test_error_rows_abort_the_gated_asset_and_nothing_is_written(tmp_path: Path) -> None:
    @dd.asset(Payments)
    def payments() -> pl.DataFrame:
        return defective_payments()

    result = _materialize([payments], tmp_path)

    assert not result.success
    assert not (tmp_path / "payments.parquet").exists()
    name, message = step_error(result)
    assert name == ValidationAbortError.__name__
    assert "amount|min_exclusive: 1 row(s)" in message
    assert "payment_id|unique: 2 row(s)" in message
    assert "reference|check__str_length" not in message  # a warning never aborts


def test_with_a_quarantine_error_rows_go_there_and_the_rest_is_written(tmp_path: Path) -> None:
    @dd.asset(Payments, quarantine=True)
    def payments() -> pl.LazyFrame:
        return defective_payments().lazy()

    result = _materialize([payments], tmp_path)

    assert result.success
    # the error rows are quarantined and the table is clean: every failing check warns
    warned = dg.AssetCheckSeverity.WARN
    assert failed(result) == {name: (n, warned) for name, (n, _) in DEFECTIVE_FAILED.items()}
    written = pl.read_parquet(tmp_path / "payments.parquet")
    assert written["payment_id"].to_list() == VALID_IDS
    quarantined = pl.read_parquet(tmp_path / "payments_quarantine.parquet")
    assert sorted(quarantined["payment_id"].to_list()) == [3, 4, 4]
    assert "dy_rule__amount__min_exclusive" in quarantined.columns


# --------------------------------------- the Component --------------------------------------- #


def test_a_component_entry_can_name_a_pandera_model(
    sandbox: DefsFolderSandbox, tmp_path: Path
) -> None:
    path = scaffold_checks(
        sandbox,
        {
            "assets_outside_defs": True,  # `payments` is defined here, in Python
            "checks": [{"asset": "payments", "schema": f"{MODULE}:Payments"}],
        },
    )

    with sandbox.load_component_and_build_defs(defs_path=path) as (_, defs):
        checks = list(defs.asset_checks or [])
        result = _materialize([_payments_asset(defective_payments()), *checks], tmp_path)

    assert failed(result) == DEFECTIVE_FAILED


# ---------------------------------------- dd.wiring ---------------------------------------- #


def test_wiring_takes_a_dataframe_schema_object() -> None:
    specs = dd.wiring.check_specs(payments_schema, asset="payments")
    results = list(
        dd.wiring.check_results(payments_schema, defective_payments(), asset_key="payments")
    )

    assert [r.check_name for r in results] == [s.name for s in specs]
    assert failed(results) == DEFECTIVE_FAILED
    blocking = {s.name for s in specs if s.blocking}
    assert "dy_rule__reference__check__str_length" not in blocking
    assert "dy_rule__amount__min_exclusive" in blocking


# ---------------------------------- migration keeps names ---------------------------------- #


@pytest.mark.parametrize(
    ("model", "name"),
    [(Payments, "Payments"), (payments_schema, "Payments")],
    ids=["model", "schema-object"],
)
def test_check_names_survive_migration(model: Any, name: str, tmp_path: Path) -> None:
    migrated = getattr(load(migrate(model), tmp_path), name)

    def names(schema: Any) -> list[tuple[str, bool]]:
        return [(s.name, s.blocking) for s in dd.wiring.check_specs(schema, asset="payments")]

    assert names(migrated) == names(model)
    assert ("dy_rule__reference__check__str_length", False) in names(migrated)
    assert ("dy_rule__amount__min_exclusive", True) in names(migrated)
