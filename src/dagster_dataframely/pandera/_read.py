"""Reading a Pandera polars model, and refusing what Dataframely cannot honour.

Everything a translated schema could not do the way Pandera does it is refused here, at
definition time, with one `UnsupportedSchemaError` that lists each feature, the column it is
on, and the way out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pandera.api.polars.components import Column
from pandera.api.polars.container import DataFrameSchema
from pandera.api.polars.model import DataFrameModel
from pandera.dtypes import DataType
from pandera.errors import SchemaInitError

from ..errors import UnsupportedSchemaError
from ._checks import POLARS_BUILTINS, builtin_name
from ._dtypes import DtypeError, column_type


@dataclass(frozen=True)
class PanderaSchema:
    """A Pandera polars schema, with the model class it came from (if any)."""

    name: str
    schema: DataFrameSchema
    model: type[DataFrameModel] | None

    def column_dtype(self, column: Column) -> Any:
        """The column's dtype; a schema-wide `dtype` overrides it, as in Pandera."""
        return self.schema.dtype if self.schema.dtype is not None else column.dtype

    def attribute(self, column: str) -> str | None:
        """The model attribute that declares `column` (it may have an `alias`)."""
        if self.model is None:
            return None
        fields = self.model.__fields__
        return fields[column][1].original_name if column in fields else None

    def unique_groups(self) -> list[list[str]]:
        """`Config.unique` / `unique=` as lists of columns that are unique together."""
        unique = self.schema.unique
        if not unique:
            return []
        if isinstance(unique, str):
            return [[unique]]
        if all(isinstance(item, str) for item in unique):
            return [list(unique)]
        return [[item] if isinstance(item, str) else list(item) for item in unique]


def read(model: Any) -> PanderaSchema:
    """The Pandera schema behind `model`, refusing features Dataframely cannot honour."""
    if isinstance(model, type) and issubclass(model, DataFrameModel):
        problems = _model_problems(model)
        if problems:
            raise _unsupported(model.__name__, problems)
        try:
            schema = model.to_schema()
        except SchemaInitError as error:
            raise UnsupportedSchemaError(
                f"Pandera model {model.__name__} cannot be built: {error}"
            ) from error
        source = PanderaSchema(model.__name__, schema, model)
    elif isinstance(model, DataFrameSchema):
        source = PanderaSchema(model.name or "PanderaSchema", model, None)
    else:
        raise UnsupportedSchemaError(
            f"{model!r} is not a Pandera polars model. dagster-dataframely translates "
            "`pandera.polars.DataFrameModel` subclasses and `pandera.polars.DataFrameSchema` "
            "objects; pandas Pandera schemas are not polars schemas (import pandera.polars)."
        )
    problems = _schema_problems(source)
    if problems:
        raise _unsupported(source.name, problems)
    return source


def _unsupported(name: str, problems: list[str]) -> UnsupportedSchemaError:
    listed = "\n".join(f"  - {p}" for p in problems)
    return UnsupportedSchemaError(
        f"Pandera model {name} uses features Dataframely cannot honour, so it cannot be "
        f"translated:\n{listed}"
    )


def _model_problems(model: type[DataFrameModel]) -> list[str]:
    problems = []
    if model.__root_parsers__:
        problems.append(_PARSERS.format(where="the model"))
    for column, parsers in (model.__parsers__ or {}).items():
        if parsers:
            problems.append(_PARSERS.format(where=f"column {column!r}"))
    return problems


_PARSERS = (
    "parsers (on {where}): a parser transforms the data before it is checked; Dataframely "
    "only checks. Move the transformation into the asset that writes the table"
)
_COERCE = (
    "coerce=True (on {where}): Pandera casts the data before checking it; "
    "dagster-dataframely never casts. Make the asset write the declared dtypes (Schema.cast "
    "does it), then remove coerce"
)


def _schema_problems(source: PanderaSchema) -> list[str]:
    schema = source.schema
    problems = []
    if schema.strict is True:
        problems.append(
            "strict=True (schema-wide): Dataframely does not reject extra columns; "
            "dagster-dataframely drops them from what it writes. Remove strict"
        )
    elif schema.strict == "filter":
        problems.append(
            "strict='filter' (schema-wide): dropping extra columns is what "
            "dagster-dataframely already does for the table it writes. Remove strict"
        )
    if schema.ordered:
        problems.append(
            "ordered=True (schema-wide): Dataframely does not check column order, and "
            "dagster-dataframely writes columns in schema order. Remove ordered"
        )
    if schema.coerce:
        problems.append(_COERCE.format(where="the schema"))
    if schema.add_missing_columns:
        problems.append(
            "add_missing_columns=True (schema-wide): Pandera adds missing columns; Dataframely "
            "requires them. Add the columns in the asset, then remove add_missing_columns"
        )
    if getattr(schema, "parsers", None):
        problems.append(_PARSERS.format(where="the schema"))
    if not schema.columns and (schema.checks or schema.dtype is not None):
        problems.append(
            "dataframe checks or a schema-wide dtype on a schema that declares no columns: "
            "Pandera applies them to whatever columns the frame has; a Dataframely schema "
            "checks the columns it declares. Declare the columns they should cover "
            "(columns={'a': pa.Column(...)})"
        )
    for name, column in schema.columns.items():
        problems.extend(_column_problems(name, column, source.column_dtype(column)))
    for check in schema.checks:
        problems.extend(_check_problems("the schema", check))
    known = set(schema.columns)
    for group in source.unique_groups():
        unknown = [c for c in group if c not in known]
        if unknown:
            problems.append(
                f"unique={group!r} (schema-wide) names {unknown!r}, which the schema does not "
                "declare; Pandera then checks whatever columns happen to be there. Declare "
                "the columns or drop them from unique"
            )
    return problems


def _column_problems(name: str, column: Column, dtype: Any) -> list[str]:
    where = f"column {name!r}"
    problems = []
    if not column.required:
        problems.append(
            f"required=False (an Optional column) on {where}: Dataframely columns are always "
            "present. Make the column required (nullable=True if it may be empty), or move it "
            "to a second model"
        )
    if column.regex:
        problems.append(
            f"regex=True on {where}: the name is a pattern for many columns; Dataframely "
            "declares each column by name. List the matching columns explicitly"
        )
    if column.coerce:
        problems.append(_COERCE.format(where=where))
    if column.default is not None:
        problems.append(
            f"default= on {where}: Pandera fills nulls before checking; Dataframely never "
            "changes data. Fill nulls in the asset, then remove default"
        )
    if getattr(column, "parsers", None):
        problems.append(_PARSERS.format(where=where))
    if dtype is None and not column.nullable:
        problems.append(
            f"no dtype on non-nullable {where}: Pandera then rejects NaN only if the data is "
            "float, which a rule cannot know. Declare the dtype"
        )
    elif data_dependent(dtype):
        problems.append(
            f"custom dtype {type(dtype).__name__} on {where} overrides check(), which may "
            "look at the data; Dataframely checks a column's dtype only. Declare the polars "
            "dtype (pa.Column(pl.String)) and move the data condition to a pa.Check"
        )
    elif dtype is not None:
        try:
            column_type(dtype)
        except DtypeError as error:
            problems.append(f"dtype {dtype} on {where}: {error}")
    for check in column.checks:
        problems.extend(_check_problems(where, check))
    return problems


def data_dependent(dtype: Any) -> bool:
    """Whether `dtype` is a user's Pandera dtype with a `check()` of its own: Pandera passes
    that method the data, so its verdict may depend on values, not the dtype alone."""
    method = getattr(type(dtype), "check", None)
    return isinstance(dtype, DataType) and not getattr(method, "__module__", "").startswith(
        "pandera."
    )


def _check_problems(where: str, check: Any) -> list[str]:
    name = getattr(check, "name", repr(check))
    if getattr(check, "groupby", None) is not None:
        return [
            f"check {name!r} with groupby= on {where}: Pandera's polars backend does not run "
            "grouped checks either. Write it as a dataframe check with `.over(...)`"
        ]
    builtin = builtin_name(check)
    if builtin is not None and builtin not in POLARS_BUILTINS:
        return [
            f"built-in check {builtin!r} on {where}: Pandera's polars backend has no such "
            "check. Replace it with a custom check"
        ]
    return []
