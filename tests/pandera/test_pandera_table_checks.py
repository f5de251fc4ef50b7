"""Pandera checks whose verdict is one value for the whole table fail an empty table.

Pandera fails a frame on a check returning one `False` (`pl.len() > 0`, `sum() > 0`), rows
or none; spreading that verdict to rows left an empty table nothing to fail. Such checks now
fail with `dy_failed_count` 0 and say so, as a sidecar check and in `dd.asset`, in real runs,
for the translated model and for the Dataframely source `migrate` writes of it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg
import pandera.polars as pa
import polars as pl
import pytest
from pandera.api.polars.types import PolarsData
from pandera.errors import SchemaError
from written_schema import load

import dagster_dataframely as dd
from dagster_dataframely.errors import InvalidTableCheckError, ValidationAbortError
from dagster_dataframely.pandera import migrate, table_verdicts


def not_empty(data: PolarsData) -> pl.LazyFrame:
    """The table has rows (traced: one polars expression)."""
    return data.lazyframe.select(pl.len() > 0)


def has_rows(data: PolarsData) -> bool:
    """The table has rows (run on the rows: it collects them)."""
    return data.lazyframe.collect().height > 0


def positive_total(data: PolarsData) -> pl.LazyFrame:
    """The column's total is positive."""
    return data.lazyframe.select(pl.col(data.key).sum() > 0)


SCHEMA = pa.DataFrameSchema(
    {"amount": pa.Column(int, checks=pa.Check(positive_total)), "note": pa.Column(str)},
    checks=[pa.Check(not_empty), pa.Check(has_rows)],
)
TABLE_CHECKS = ["dy_rule__not_empty", "dy_rule__has_rows", "dy_rule__amount__check__positive_total"]
EMPTY = pl.DataFrame(schema={"amount": pl.Int64, "note": pl.String})
ROWS = pl.DataFrame({"amount": [3], "note": ["x"]})


def _pandera_fails(check: pa.Check, column: str | None, frame: pl.DataFrame) -> bool:
    columns = {"amount": pa.Column(int), "note": pa.Column(str)}
    if column is None:
        schema = pa.DataFrameSchema(columns, checks=check)
    else:
        schema = pa.DataFrameSchema({**columns, column: pa.Column(int, checks=check)})
    try:
        schema.validate(frame)
    except SchemaError:
        return True
    return False


class Payments(pa.DataFrameModel):
    """The same checks, in the model form."""

    amount: int
    note: str

    @pa.check("amount")
    def positive_total(cls, data: PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(pl.col(data.key).sum() > 0)

    @pa.dataframe_check
    def not_empty(cls, data: PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(pl.len() > 0)

    @pa.dataframe_check
    def has_rows(cls, data: PolarsData) -> bool:
        return data.lazyframe.collect().height > 0


def _checks(
    frame: pl.DataFrame, tmp_path: Path, schema: Any = SCHEMA
) -> dict[str, dg.AssetCheckEvaluation]:
    @dg.asset
    def payments() -> pl.DataFrame:
        return frame

    result = dg.materialize(
        [payments, dd.schema_checks(schema, asset="payments")],
        resources={"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path))},
        raise_on_error=False,
    )
    return {e.check_name: e for e in result.get_asset_check_evaluations()}


def test_pandera_fails_the_empty_table_on_each_and_passes_rows() -> None:
    cases = [(pa.Check(not_empty), None), (pa.Check(has_rows), None)]
    cases.append((pa.Check(positive_total), "amount"))
    assert [_pandera_fails(check, column, EMPTY) for check, column in cases] == [True] * 3
    assert [_pandera_fails(check, column, ROWS) for check, column in cases] == [False] * 3


def test_a_sidecar_check_fails_an_empty_table_with_zero_rows_failed(tmp_path: Path) -> None:
    checks = _checks(EMPTY, tmp_path)
    failing = sorted(name for name, e in checks.items() if not e.passed)
    assert failing == sorted(TABLE_CHECKS)
    for name in TABLE_CHECKS:
        metadata = checks[name].metadata
        assert metadata["dy_failed_count"].value == 0
        assert metadata["dy_row_count"].value == 0
        assert metadata["dy_assessment"].value == (
            "failed at severity ERROR: the table fails it (0 rows)"
        )
        assert checks[name].severity == dg.AssetCheckSeverity.ERROR


def test_the_same_checks_pass_a_table_with_rows(tmp_path: Path) -> None:
    assert all(e.passed for e in _checks(ROWS, tmp_path).values())


def test_a_gated_asset_aborts_on_an_empty_table_as_pandera_refuses_it(tmp_path: Path) -> None:
    @dd.asset(SCHEMA)
    def payments() -> pl.DataFrame:
        return EMPTY

    with pytest.raises(ValidationAbortError, match="not_empty: the \\(empty\\) table fails it"):
        dg.materialize(
            [payments], resources={"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path))}
        )
    assert not (tmp_path / "payments.parquet").exists()


@pytest.mark.parametrize(
    ("model", "name", "path"),
    [(SCHEMA, "PanderaSchema", f"{__name__}:SCHEMA"), (Payments, "Payments", None)],
    ids=["schema", "model"],
)
def test_the_migrated_source_fails_an_empty_table_as_pandera_does(
    model: Any, name: str, path: str | None, tmp_path: Path
) -> None:
    migrated = load(migrate(model, import_path=path), name)

    empty = _checks(EMPTY, tmp_path / "empty", migrated)
    rows = _checks(ROWS, tmp_path / "rows", migrated)

    assert _pandera_model_fails(model, EMPTY) and not _pandera_model_fails(model, ROWS)
    assert sorted(n for n, e in empty.items() if not e.passed) == sorted(TABLE_CHECKS)
    assert all(e.passed for e in rows.values())


def _pandera_model_fails(model: Any, frame: pl.DataFrame) -> bool:
    try:
        model.validate(frame)
    except SchemaError:
        return True
    return False


def test_a_table_verdict_names_a_rule_of_the_schema() -> None:
    with pytest.raises(InvalidTableCheckError, match=r"'not_emtpy', not a rule.*'not_empty'"):
        table_verdicts("not_emtpy")(dd.pandera.to_dataframely(Payments))
