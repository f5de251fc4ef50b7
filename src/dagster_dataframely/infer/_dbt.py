"""`dbt_schemas`: a Dataframely schema module per dbt model, from its tests and contract.

`not_null`, `unique`, `accepted_values` and a contract's `data_type` and constraints become
declarations; `dbt_utils.unique_combination_of_columns` a composite primary key (a rule over
the group where a key column may be null); `expression_is_true` a `@dy.rule()` that reads the
SQL with `pl.sql_expr`, marked for translation. `severity: warn` becomes `dd.warn`,
`warn_if`/`error_if` `dd.tolerate`. A test with no translation is listed in a comment.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import polars as pl
from sqlglot import exp

from .._engine.naming import check_name
from .._engine.sql.dialects import described
from .._writing.literals import literal, string
from .._writing.names import class_name, identifier, unique_name
from ..errors import InvalidSourceError
from ..sources._duckdb_cursors import _dtypes as duckdb_dtypes
from ..sources._sql_query import polars_dtype
from ._columns import InferredColumn, InferredTable, Profile, Tolerated, WrittenRule
from ._database import Database, database, read_columns, unreadable
from ._manifest import DbtModel, DbtTest, Manifest, read_manifest
from ._profile import IS_IN_LIMIT, is_in_limit_of, profile_table
from ._proposals import adopted
from ._relationships import MODULE, Relationship, relationships, render_collections
from ._render import render

ABOUT = (
    "Written by `dagster-dataframely infer-dbt` from the model's dbt tests and contract: "
    "each translated test keeps its severity (`dd.warn`) and its warn_if/error_if "
    "(`dd.tolerate`); tests without a translation are listed as comments. Rules marked "
    "TODO read dbt's SQL with polars: confirm each means what the warehouse means."
)
#: dbt counts the rows its test query returns; for these tests that is one row per failing
#: value or group, where Dataframely counts failing rows.
_GROUPED = {"unique", "accepted_values", "unique_combination_of_columns"}
#: `not_null` of a column of unknown type (`dy.Any`, which has no `nullable=`).
NOT_NULL = "lambda col: col.is_not_null()"


def dbt_schemas(
    manifest: str | os.PathLike[str],
    *,
    select: Sequence[str] | None = None,
    connection: Any = None,
    dialect: str | None = None,
    profile: bool = False,
    adopt: bool = False,
    is_in_limit: int = IS_IN_LIMIT,
) -> dict[str, str]:
    """Dataframely schema source for each selected model of a dbt project, by model name.

    Args:
        manifest: The project's `target/manifest.json` (`dbt parse` writes it).
        select: Models in dbt's selector syntax: names, globs (`stg_*`), `tag:`, `path:`,
            the `+` graph operators, `,` to intersect; None selects every model.
        connection: The warehouse the models are built in (as for `infer_schema`): column
            types are then read from the tables as the sources read them. Without it they
            come from the contract's `data_type`, and a column without one is `dy.Any()`.
        dialect: The warehouse's sqlglot dialect; defaults to the manifest's adapter.
        profile: With `connection`: profile each model's table, and write what its rows
            propose beyond its tests as `# proposed` comments (as `infer_schema` does).
        adopt: Profile, and write the proposals as options of the declarations, each marked
            as learned from the data on the day: a model built by `CREATE TABLE AS`
            declares no constraint, so this is how its schema gets rules of its data.
        is_in_limit: A text column with at most this many distinct values is proposed
            `is_in` those values.

    Raises:
        UnsupportedManifestError: The file is not a manifest of a version read here.
        UnknownModelError: A selected name is not a model of the manifest.
        InvalidSourceError: `profile` or `adopt` without `connection`.
        InvalidSettingError: `is_in_limit` is not a whole number of at least 1.
    """
    limit = is_in_limit_of(is_in_limit, "dbt_schemas")
    if (profile or adopt) and connection is None:
        raise InvalidSourceError(
            "dbt_schemas profiles the models' tables in the warehouse they are built in: give "
            "its connection= (--duckdb FILE or --postgres CONNINFO) with profile or adopt "
            "(--profile, --adopt), or infer from the manifest alone without them."
        )
    read = read_manifest(Path(manifest))
    models = read.select(select)
    with _warehouse(connection, dialect or read.adapter) as db:
        profiled = limit if profile or adopt else None
        tables = {model.name: _table(model, read, db, profiled) for model in models}
    kept, refused = relationships({m.name: m.tests for m in models}, tables)
    sources = {}
    for model in models:
        table = tables[model.name]
        notes = [*table.notes, *_relationship_notes(model, kept, refused)]
        sources[model.name] = render(
            replace(table, notes=notes),
            class_name(model.name),
            about=ABOUT,
            adopted=adopted(adopt),
        )
    if kept:
        sources[MODULE] = render_collections(kept)
    return sources


def _relationship_notes(
    model: DbtModel, kept: list[Relationship], refused: dict[str, str]
) -> list[str]:
    notes = [
        f"dbt test `{r.test.name}` is a filter of {class_name(r.model)}Relationships in "
        f"{MODULE}.py."
        for r in kept
        if r.model == model.name
    ]
    return notes + [
        f"Not translated: dbt test `{test.name}` (relationships): {refused[test.name]}."
        for test in model.tests
        if test.name in refused
    ]


@contextlib.contextmanager
def _warehouse(connection: Any, dialect: str) -> Iterator[Database | None]:
    if connection is None:
        yield None
        return
    with database(connection, dialect) as db:
        yield db


def _table(
    model: DbtModel, manifest: Manifest, db: Database | None, is_in_limit: int | None
) -> InferredTable:
    """The model's table: its columns, its tests translated, and (with `is_in_limit`, the
    profile's) the profile of its rows."""
    profiles: dict[str, Profile] = {}
    if db is not None:
        table, read, facts = read_columns(db, model.relation)
        columns = {column.name: _constrained(column, model) for column in read}
        where = f"dbt model `{model.name}` ({model.relation})"
        if is_in_limit is not None:
            profiles = profile_table(db, table, read, facts, is_in_limit=is_in_limit)
    else:
        columns = {
            name: _declared(column.data_type, manifest.adapter, name, column.constraints, model)
            for name, column in model.columns.items()
        }
        where = f"dbt model `{model.name}` (its contract)"
    translation = _Translation(columns)
    for test in model.tests:
        translation.add(test)
    return InferredTable(
        name=model.name,
        where=where,
        columns=list(translation.columns.values()),
        profiles=profiles,
        notes=translation.notes,
        rules=translation.rules,
        warn=translation.warn,
        tolerances=translation.tolerances,
        replaces=translation.replaced,
    )


def _declared(
    data_type: str | None, adapter: str, name: str, constraints: frozenset[str], model: DbtModel
) -> InferredColumn:
    """A column as the model's contract declares it."""
    dtype = None if data_type is None else contract_dtype(data_type, adapter)
    nullable = "not_null" not in constraints and name not in model.primary_key
    if data_type is None:  # `dy.Any`: only a check can say `not_null`
        checks = {} if nullable else {"not_null": NOT_NULL}
        return InferredColumn(name=name, dtype=None, declared="no data_type", checks=checks)
    return InferredColumn(
        name=name,
        dtype=dtype,
        declared=data_type,
        nullable=nullable,
        primary_key=name in model.primary_key,
        unreadable=unreadable(dtype, data_type, adapter),
    )


def _constrained(column: InferredColumn, model: DbtModel) -> InferredColumn:
    """A column read from the warehouse, with what the model's contract declares of it (a
    contract not enforced does not make the table declare its constraints)."""
    declared = model.columns.get(column.name)
    keyed = column.primary_key or column.name in model.primary_key
    not_null = declared is not None and "not_null" in declared.constraints
    return replace(column, nullable=column.nullable and not not_null, primary_key=keyed)


def contract_dtype(data_type: str, adapter: str) -> pl.DataType | None:
    """The dtype the package's source for `adapter` reads a column of `data_type` as: DuckDB
    is asked (its Arrow result of a typed NULL, as `DuckDBTableSource` reads), another
    warehouse's type name is mapped as `SQLTableSource` maps its description."""
    try:
        built = exp.DataType.build(data_type, dialect=adapter)
    except Exception:
        return None
    if adapter == "duckdb":
        import duckdb  # an optional reader: imported where it is used

        probe = exp.select(exp.alias_(exp.cast(exp.Null(), built), "c")).sql(dialect="duckdb")
        with duckdb.connect() as connection:
            try:
                return duckdb_dtypes(connection, probe)["c"]
            except BaseException as error:  # polars panics on types it cannot read
                if isinstance(error, (KeyboardInterrupt, SystemExit)):
                    raise
                return None
    reading = described(adapter)
    built = reading.stored_type(built)
    params = [int(p.name) for p in built.expressions if p.name.isdigit()]
    precision, scale = [*params, None, None][:2] if reading.described_precision else [None] * 2
    name = built.sql(dialect=adapter)
    return polars_dtype(name, (name, None, None, None, precision, scale), adapter)


class _Translation:
    """The columns, rules, severities, tolerances and notes the tests of one model give."""

    def __init__(self, columns: dict[str, InferredColumn]) -> None:
        self.columns = columns
        self.rules: list[WrittenRule] = []
        self.warn: list[str] = []
        self.tolerances: list[Tolerated] = []
        self.notes: list[str] = []
        self.taken: set[str] = set(columns)
        self.replaced: dict[str, str] = {}

    def add(self, test: DbtTest) -> None:
        if test.kind == "relationships":  # a collection's filter (`_relationships`)
            return
        rule = self._translated(test)
        if rule is None:
            self.notes.append(f"Not translated: dbt test `{test.name}` ({test.label}).")
            return
        self.replaced[test.name] = check_name(rule)
        self._severity(test, rule)

    def _column(self, name: str) -> InferredColumn:
        if name not in self.columns:
            self.columns[name] = InferredColumn(name=name, dtype=None, declared="untyped")
        return self.columns[name]

    def _translated(self, test: DbtTest) -> str | None:
        """The Dataframely rule name that decides the test, None where none does."""
        column = test.column
        if test.kind == "not_null" and column:
            if self._column(column).dtype is None:  # `dy.Any` has no `nullable=`
                return self._check(column, "not_null", NOT_NULL)
            self.columns[column] = replace(self._column(column), nullable=False)
            return f"{column}|nullability"
        if test.kind == "unique" and column:
            found = self._column(column)
            if found.dtype is None:  # `dy.Any` has no `unique=`: the same test as a check
                return self._check(column, "unique", "lambda col: col.is_unique() | col.is_null()")
            self.columns[column] = replace(found, unique=True)
            return f"{column}|unique"
        if test.kind == "accepted_values" and column:
            return self._accepted(test, column)
        if test.kind == "expression_is_true":
            expression = str(test.kwargs.get("expression", ""))
            return self._expression(test, f"{column} {expression}" if column else expression)
        if test.kind == "unique_combination_of_columns":
            return self._combination(test, list(test.kwargs.get("combination_of_columns") or ()))
        return None

    def _accepted(self, test: DbtTest, column: str) -> str | None:
        values = list(test.kwargs.get("values") or ())
        if not test.kwargs.get("quote", True):  # SQL literals: numbers are written as such
            values = [_number(v) for v in values]
            if any(v is None for v in values):
                return None
        else:
            values = [str(v) for v in values]
        return self._check(
            column, "accepted_values", f"lambda col: col.is_in({literal(values).text})"
        )

    def _check(self, column: str, name: str, text: str) -> str:
        """A `check=` entry of `column` (its key made unique), and the rule's name."""
        found = self._column(column)
        key = unique_name(name, set(found.checks))
        self.columns[column] = replace(found, checks={**found.checks, key: text})
        return f"{column}|check__{key}"

    def _expression(self, test: DbtTest, expression: str) -> str | None:
        try:
            pl.sql_expr(expression)
        except Exception:
            return None
        name = unique_name(identifier(test.name, "rule"), self.taken)
        doc = (
            f"dbt test `{test.name}`: `{expression}`. TODO: translate. This reads dbt's SQL "
            "with polars (`pl.sql_expr`); write it as a polars expression once it is "
            "confirmed to mean what the warehouse means."
        )
        self.rules.append(WrittenRule(name, doc, f"pl.sql_expr({string(expression)})"))
        return name

    def _combination(self, test: DbtTest, names: list[str]) -> str | None:
        if not names:
            return None
        keyed = any(c.primary_key for c in self.columns.values())
        if not keyed and all(not self._column(n).nullable for n in names):
            for n in names:
                self.columns[n] = replace(self.columns[n], primary_key=True)
            return "primary_key"
        name = unique_name(identifier(test.name, "rule"), self.taken)
        doc = f"dbt test `{test.name}`: each combination of {', '.join(names)} occurs once."
        over = ", ".join(string(n) for n in names)
        self.rules.append(WrittenRule(name, doc, f"pl.len().over({over}) == 1"))
        return name

    def _severity(self, test: DbtTest, rule: str) -> None:
        warn_above: int = _limit(test.warn_if)
        error_above: int | None = _limit(test.error_if)
        if test.severity == "warn":
            self.warn.append(rule)
            error_above = None
        elif (warn_above, error_above) == (0, 0):
            return
        if warn_above == -1 or error_above == -1:
            self.notes.append(
                f"Not translated: the warn_if {test.warn_if!r} / error_if {test.error_if!r} of "
                f"dbt test `{test.name}` (a limit is `> N`, `>= N` or `!= 0`)."
            )
            return
        if test.severity == "warn" and warn_above == 0:
            return
        self.tolerances.append(Tolerated(rule, warn_above, error_above))
        if test.kind in _GROUPED:
            self.notes.append(
                f"dbt test `{test.name}` counts failing values; its tolerance here counts "
                "failing rows."
            )


def _limit(condition: str) -> int:
    """The count of failures above which a dbt `warn_if`/`error_if` holds; -1 where the
    condition is not a lower bound."""
    found = re.fullmatch(r"\s*(!=|<>|>=|>)\s*(\d+)\s*", condition)
    if found is None:
        return -1
    operator, number = found.group(1), int(found.group(2))
    if operator in ("!=", "<>"):
        return 0 if number == 0 else -1
    return number if operator == ">" else max(number - 1, 0)


def _number(value: Any) -> int | float | None:
    try:
        return int(str(value))
    except ValueError:
        try:
            return float(str(value))
        except ValueError:
            return None


def write_modules(sources: dict[str, str], folder: Path) -> list[Path]:
    """Each model's source as `<model>.py` in `folder` (made if missing), a package: the
    relationships module imports the others relatively."""
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / "__init__.py").exists():
        (folder / "__init__.py").write_text("")
    written = []
    for name, source in sources.items():
        path = folder / f"{identifier(name, 'model')}.py"
        path.write_text(source, encoding="utf-8")
        written.append(path)
    return written
