"""What Dataframely cannot honour is refused at translation, naming feature, column, way out."""

from __future__ import annotations

import subprocess
import sys
from typing import Any, Optional

import pandera.pandas as pa_pandas
import pandera.polars as pa
import polars as pl
import pytest
from pandera import dtypes
from pandera import errors as pa_errors
from pandera.api.dataframe.model_components import parser
from pandera.api.polars.types import PolarsData
from pandera.engines import polars_engine

import dagster_dataframely as dd
from dagster_dataframely.errors import UnsupportedSchemaError
from dagster_dataframely.pandera import migrate, to_dataframely
from dagster_dataframely.wiring import rules


def _column(**kwargs: Any) -> pa.DataFrameSchema:
    kwargs.setdefault("dtype", int)
    return pa.DataFrameSchema({"amount": pa.Column(**kwargs)})


class OptionalColumn(pa.DataFrameModel):
    amount: Optional[int]  # noqa: UP045 - Pandera reads `Optional` as required=False


class Strict(pa.DataFrameModel):
    amount: int

    class Config:
        strict = True


class Filtering(pa.DataFrameModel):
    amount: int

    class Config:
        strict = "filter"


class Ordered(pa.DataFrameModel):
    amount: int

    class Config:
        ordered = True


class Coerced(pa.DataFrameModel):
    amount: int

    class Config:
        coerce = True


class AddsColumns(pa.DataFrameModel):
    amount: int

    class Config:
        add_missing_columns = True


class Parsed(pa.DataFrameModel):
    amount: int

    @parser("amount")
    def double(cls, data: Any) -> Any:
        return data


def _grouped(data: PolarsData) -> pl.LazyFrame:
    return data.lazyframe.select(pl.col("amount") > 0)


def _positive(value: int) -> bool:
    return value > 0


def _all_positive(data: PolarsData) -> pl.LazyFrame:
    return data.lazyframe.select(pl.all() > 0)


@polars_engine.Engine.register_dtype
@dtypes.immutable
class LowerCase(polars_engine.DataType):
    """A string dtype whose check() looks at the values: lower-case strings only."""

    type = pl.String()

    def check(self, pandera_dtype: Any, data_container: Any = None) -> Any:
        if data_container is None:
            return polars_engine.Engine.dtype(pandera_dtype).type == pl.String
        key = data_container.key
        return bool(
            data_container.lazyframe.select((pl.col(key) == pl.col(key).str.to_lowercase()).all())
            .collect()
            .item()
        )


#: Schemas whose verdict depends on what Dataframely cannot declare, and a frame Pandera
#: rejects: translating them would pass it.
PANDERA_REJECTS = {
    "columnless-element-wise": (
        pa.DataFrameSchema(dtype=int, checks=pa.Check(_positive, element_wise=True)),
        pl.DataFrame({"a": [1, -1]}),
    ),
    "columnless-frame-check": (
        pa.DataFrameSchema(checks=pa.Check(_all_positive)),
        pl.DataFrame({"a": [1, -1]}),
    ),
    "columnless-dtype": (pa.DataFrameSchema(dtype=int), pl.DataFrame({"a": ["x"]})),
    "data-dependent-dtype": (
        pa.DataFrameSchema({"s": pa.Column(LowerCase())}),
        pl.DataFrame({"s": ["a", "B"]}),
    ),
}

CASES = {
    "columnless-element-wise": (
        PANDERA_REJECTS["columnless-element-wise"][0],
        r"schema that declares no columns: Pandera applies them to whatever columns.*"
        r"Declare the columns",
    ),
    "columnless-frame-check": (
        PANDERA_REJECTS["columnless-frame-check"][0],
        r"schema that declares no columns.*Declare the columns",
    ),
    "columnless-dtype": (
        PANDERA_REJECTS["columnless-dtype"][0],
        r"schema-wide dtype on a schema that declares no columns",
    ),
    "data-dependent-dtype": (
        PANDERA_REJECTS["data-dependent-dtype"][0],
        r"custom dtype LowerCase on column 's' overrides check\(\).*move the data condition "
        r"to a pa.Check",
    ),
    "optional": (OptionalColumn, r"required=False.*column 'amount'.*Make the column required"),
    "strict": (Strict, r"strict=True \(schema-wide\).*Remove strict"),
    "strict-filter": (Filtering, r"strict='filter' \(schema-wide\).*Remove strict"),
    "ordered": (Ordered, r"ordered=True \(schema-wide\).*Remove ordered"),
    "coerce-schema": (Coerced, r"coerce=True \(on the schema\).*never casts.*Schema.cast"),
    "coerce-column": (_column(coerce=True), r"coerce=True \(on column 'amount'\)"),
    "add-missing": (AddsColumns, r"add_missing_columns=True.*Add the columns in the asset"),
    "parser": (Parsed, r"parsers \(on column 'amount'\).*Move the transformation"),
    "regex": (
        pa.DataFrameSchema({"amount_.+": pa.Column(int, regex=True)}),
        r"regex=True on column 'amount_\.\+'.*List the matching columns",
    ),
    "default": (_column(default=0, nullable=True), r"default= on column 'amount'.*Fill nulls"),
    "no-dtype": (_column(dtype=None), r"no dtype on non-nullable column 'amount'.*Declare"),
    "tz-agnostic": (
        _column(dtype=polars_engine.DateTime(time_zone_agnostic=True)),
        r"column 'amount': time_zone_agnostic=True.*Declare the time zone",
    ),
    "bare-struct": (_column(dtype=pl.Struct), r"column 'amount': pl.Struct without parameters"),
    "array-2d": (
        _column(dtype=pl.Array(pl.Int64, (2, 3))),
        r"column 'amount': Pandera compares only the last dimension",
    ),
    "null-dtype": (_column(dtype=pl.Null), r"column 'amount': Dataframely has no column type"),
    "groupby": (
        _column(checks=pa.Check(_grouped, groupby="amount")),
        r"check '_grouped' with groupby= on column 'amount'",
    ),
    "unique-unknown": (
        pa.DataFrameSchema({"amount": pa.Column(int)}, unique=["amount", "other"]),
        r"names \['other'\], which the schema does not declare",
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_unsupported_features_are_refused_naming_feature_column_and_way_out(name: str) -> None:
    model, message = CASES[name]
    with pytest.raises(UnsupportedSchemaError, match=f"(?s){message}"):
        to_dataframely(model)
    with pytest.raises(UnsupportedSchemaError):
        migrate(model)


@pytest.mark.parametrize("name", list(PANDERA_REJECTS))
def test_schemas_pandera_rejects_a_frame_with_are_refused_when_checks_are_defined(
    name: str,
) -> None:
    schema, frame = PANDERA_REJECTS[name]
    with pytest.raises(pa_errors.SchemaErrors):
        schema.validate(frame, lazy=True)
    with pytest.raises(UnsupportedSchemaError):
        dd.schema_checks(schema, asset="table")


def test_every_problem_is_listed_at_once() -> None:
    schema = pa.DataFrameSchema(
        {"a": pa.Column(int, required=False), "b": pa.Column(int, coerce=True)}, ordered=True
    )
    with pytest.raises(UnsupportedSchemaError) as raised:
        to_dataframely(schema)
    text = str(raised.value)
    assert "column 'a'" in text and "column 'b'" in text and "ordered=True" in text


def test_the_catalogue_refuses_a_pandera_model_through_the_same_error() -> None:
    with pytest.raises(UnsupportedSchemaError, match="required=False"):
        rules(OptionalColumn)


def test_a_pandas_pandera_schema_is_not_a_polars_model() -> None:
    with pytest.raises(UnsupportedSchemaError, match="not a Pandera polars model"):
        to_dataframely(pa_pandas.DataFrameSchema({"a": pa_pandas.Column(int)}))


def test_without_pandera_the_import_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['pandera'] = None\n"
        "import dagster_dataframely\n"
        "try:\n"
        "    import dagster_dataframely.pandera\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert "pip install 'dagster-dataframely[pandera]'" in out.stdout
