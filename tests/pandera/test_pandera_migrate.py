"""`migrate`: the source, executed, is the translated schema (rule names, severities, counts)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import dataframely as dy
import pandera.polars as pa
import polars as pl
import pytest
from hypothesis import given, settings
from pandera_models import (
    Orders,
    awkward,
    awkward_frame,
    orders_frame,
    readings,
    readings_frame,
)
from pandera_support import frames, load

from dagster_dataframely._writing import layout
from dagster_dataframely.errors import UnsupportedSchemaError
from dagster_dataframely.pandera import migrate, to_dataframely
from dagster_dataframely.wiring import rules


def catalogue(schema: type[dy.Schema]) -> list[tuple[Any, ...]]:
    return [(r.name, r.column, r.check_name, r.severity, r.description) for r in rules(schema)]


def counts(schema: type[dy.Schema], df: pl.DataFrame) -> dict[str, int]:
    return schema.filter(df, cast=False).failure.counts()


MODELS = [
    (Orders, "Orders", orders_frame),
    (readings, "Readings", readings_frame),
    (awkward, "PanderaSchema", awkward_frame),
]


@pytest.mark.parametrize(
    ("model", "name", "frame"), MODELS, ids=["model", "schema-object", "awkward-names"]
)
def test_migrated_source_gives_the_translated_catalogue_and_counts(
    model: Any, name: str, frame: Any, tmp_path: Path
) -> None:
    migrated = getattr(load(migrate(model), tmp_path), name)
    translated = to_dataframely(model)
    assert catalogue(migrated) == catalogue(translated)
    assert counts(migrated, frame()) == counts(translated, frame())
    assert counts(translated, frame())  # the sample frame breaks rules


def test_migrated_expressions_are_the_translated_expressions(tmp_path: Path) -> None:
    migrated = load(migrate(Orders), tmp_path).Orders
    translated = {r.name: r.expr for r in rules(to_dataframely(Orders))}
    for rule in rules(migrated):
        if "python_udf" in rule.expression or "map_elements" in rule.expression:
            continue  # a batched or element-wise wrapper: a new closure each time
        assert rule.expr.meta.eq(translated[rule.name]), rule.name


@pytest.mark.parametrize(("model", "name", "frame"), MODELS, ids=["model", "schema", "awkward"])
def test_source_without_ruff_is_the_same_module(
    model: Any, name: str, frame: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    formatted = migrate(model)
    monkeypatch.setattr(layout, "_ruff", lambda: None)
    raw = migrate(model)
    assert catalogue(getattr(load(raw, tmp_path), name)) == catalogue(to_dataframely(model))
    lint = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--isolated", "--select", "E,W,F", "-"],
        input=raw,
        capture_output=True,
        text=True,
        check=False,
    )
    assert lint.returncode == 0, lint.stdout
    assert raw == formatted  # written in ruff's layout already


def test_source_reads_as_documented() -> None:
    source = migrate(Orders)
    assert "import pandera_models as pandera_models" in source
    assert "# TODO: port the Pandera check `Orders.quantity_even`" in source
    assert "pandera_models.Orders.quantity_even" in source
    assert 'regex="^[A-Z]{2}-\\\\d+"' in source  # anchored, as Pandera matches
    assert "col.str.len_chars() <= 8" in source  # characters, not bytes
    assert "primary_key=True" in source
    assert '@dd.warn(\n    "discount|min",' in source
    assert "element-wise" in source
    compile(source, "migrated.py", "exec")


def test_a_model_without_custom_checks_needs_neither_pandera_nor_the_helper() -> None:
    class Plain(pa.DataFrameModel):
        amount: float = pa.Field(ge=0)
        code: str = pa.Field(str_length=3)

    source = migrate(Plain)
    assert "pandera" not in source.split('"""', 2)[2]
    assert "run_pandera_check" not in source
    assert "import dagster_dataframely" not in source


def test_a_lambda_that_cannot_be_imported_is_refused_with_the_way_out() -> None:
    schema = pa.DataFrameSchema(
        {"x": pa.Column(int, pa.Check(lambda d: d.lazyframe.select(pl.col("x") > 0)))}
    )
    to_dataframely(schema)  # translating needs no import
    with pytest.raises(UnsupportedSchemaError, match=r"a lambda on column 'x'.*module level"):
        migrate(schema)


def test_a_schema_object_is_found_through_an_import_path() -> None:
    source = migrate(readings, import_path="pandera_models:readings")
    assert 'pandera_models.readings.columns["value"].checks[1]' in source
    assert "pandera_models.readings.checks[0]" in source


@pytest.fixture(scope="module")
def readings_module(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return load(migrate(readings), tmp_path_factory.mktemp("migrated"))


@settings(max_examples=25, deadline=None)
@given(df=frames({"sensor": pl.String, "value": pl.Float64}))
def test_migrated_schema_object_counts_match_on_generated_frames(
    readings_module: ModuleType, df: pl.DataFrame
) -> None:
    assert counts(readings_module.Readings, df) == counts(to_dataframely(readings), df)
