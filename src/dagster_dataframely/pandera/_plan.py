"""The plan of a translated schema: every column option and rule, with its final name.

Both outputs of this subpackage are rendered from one plan, so they agree by construction:
`to_dataframely` builds a schema class from it, `migrate` writes it as source.

Naming, which fixes check names (`dy_rule__<rule with | as __>`) and so Dagster's history:

- A built-in check Dataframely has an identical option for is that option, under the
  option's own rule name: `<column>|min`, `<column>|regex`, `<column>|is_in`, ...
- Any other column check is a `check=` entry keyed by the Pandera check's name (a built-in's
  full name such as `str_length` or `greater_than_or_equal_to`, the user's `name=`, or the
  custom function's name; a lambda is `check`): rule `<column>|check__<key>`.
- A dataframe check is a `@dy.rule` named the same way; `unique=` across columns is
  `primary_key` when there is one group of non-nullable columns, else `unique_<columns>`.
- Names become identifiers (other characters -> `_`); a repeated name gets `_2`, `_3`, ...
  in declaration order; a schema rule never takes a column's name or a `dy.Schema` attribute.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import dataframely as dy
import polars as pl
from pandera.api.checks import Check

from .._engine.constraints import docstring_summary
from .._writing.literals import string
from .._writing.names import RESERVED, attribute_name, class_name, identifier, unique_name
from ._checks import builtin_name, translate
from ._dtypes import ColumnType, column_type
from ._origin import origin
from ._read import PanderaSchema, read

_SLOW = " (element-wise: Python runs once per value, which is slow on large tables)."


@dataclass(frozen=True)
class Template:
    """A polars expression as text: `{col}` is the column, `{<param>}` each argument."""

    text: str
    params: dict[str, Any] = field(default_factory=dict)
    #: For a dataframe-level built-in: the columns `{col}` stands for, joined with `&`.
    columns: tuple[str, ...] | None = None
    #: `ignore_na=False`: a null verdict fails.
    nulls_fail: bool = False
    #: One verdict for the whole table (`unique_values_eq`), which an empty table can fail.
    whole_table: bool = False

    def render(self, col: str, params: dict[str, str]) -> str:
        """The expression text, with `col` for the column and `params` for the arguments."""
        if self.columns is not None:
            parts = [self.text.format(col=f"pl.col({string(c)})", **params) for c in self.columns]
            text = parts[0] if len(parts) == 1 else f"pl.all_horizontal({', '.join(parts)})"
        else:
            text = self.text.format(col=col, **params)
        return f"({text}).fill_null(False)" if self.nulls_fail else text


@dataclass(frozen=True)
class Wrapped:
    """A custom Pandera check, run through `run_pandera_check`."""

    check: Check
    key: str  # the column, or "*" for a dataframe check
    index: int  # the check's position in its column's (or the schema's) checks

    @property
    def label(self) -> str:
        return label(self.check)


@dataclass(frozen=True)
class Entry:
    """One `check=` entry of a column, or one `@dy.rule` of the schema."""

    name: str
    body: Template | Wrapped
    why: str  # a comment for the migrated source
    description: str | None = None  # the docstring (wrapped checks and schema rules)
    warn: bool = False


@dataclass
class ColumnPlan:
    name: str
    attribute: str
    type: ColumnType
    #: Dataframely options in source order (nullable, unique, bounds, regex, ...).
    options: dict[str, Any]
    #: Why an option is what it is, for options that need saying.
    notes: dict[str, str]
    checks: list[Entry]
    warned_options: list[str]
    description: str | None
    metadata: dict[str, Any] | None

    def build(self, **extra: Any) -> dy.Column:
        return self.type.build(**self.options, **extra)


@dataclass
class SchemaPlan:
    source: PanderaSchema
    class_name: str
    doc: str | None
    columns: list[ColumnPlan]
    rules: list[Entry]

    @property
    def frame(self) -> dict[str, pl.DataType]:
        """The columns and dtypes a wrapped Pandera check sees."""
        return {c.name: c.type.build(**_plain(c.type)).dtype for c in self.columns}

    @property
    def warn(self) -> list[str]:
        """Rule names that are `"warn"`: from checks with `raise_warning=True`."""
        names = [f"{c.name}|{option}" for c in self.columns for option in c.warned_options]
        names += [f"{c.name}|check__{e.name}" for c in self.columns for e in c.checks if e.warn]
        return names + [rule.name for rule in self.rules if rule.warn]

    @property
    def table_verdicts(self) -> list[str]:
        """Rule names whose check may give one verdict for the whole table, which Pandera
        fails an empty table on (`pl.len() > 0`): custom checks and whole-table built-ins."""
        names = [f"{c.name}|check__{e.name}" for c in self.columns for e in c.checks if _judges(e)]
        return names + [rule.name for rule in self.rules if _judges(rule)]

    @property
    def wrapped(self) -> list[Wrapped]:
        entries = [e for c in self.columns for e in c.checks] + self.rules
        return [e.body for e in entries if isinstance(e.body, Wrapped)]


def plan(model: Any) -> SchemaPlan:
    """The plan for a Pandera polars model or schema (refusing what cannot be honoured)."""
    source = read(model)
    schema = source.schema
    attributes: set[str] = set()
    columns = [_column(source, name, column, attributes) for name, column in schema.columns.items()]
    taken = set(schema.columns) | attributes | RESERVED
    rules = _unique_rules(source, columns, taken)
    for index, check in enumerate(schema.checks):
        name = unique_name(identifier(check.name), taken)
        rules.append(_schema_check(check, index, name, list(schema.columns)))
    doc = schema.description or schema.title
    return SchemaPlan(source, _class_name(source), doc, columns, rules)


def _judges(entry: Entry) -> bool:
    return isinstance(entry.body, Wrapped) or entry.body.whole_table


def label(check: Check) -> str:
    """How a reader names a custom check: `Orders.amount_is_round`, lambda `not_42`."""
    name = origin(check).label
    if not name.endswith("<lambda>"):
        return f"`{name}`"
    return "a lambda" if check.name in (None, "<lambda>") else f"lambda `{check.name}`"


def _class_name(source: PanderaSchema) -> str:
    """The model's class name; a schema object's name in CamelCase (`order_lines` ->
    `OrderLines`)."""
    if source.model is not None:
        return identifier(source.name, "PanderaSchema")
    return class_name(source.name or "", "PanderaSchema")


def _plain(kind: ColumnType) -> dict[str, Any]:
    return {} if kind.kind == "Any" else {"nullable": True}


def _column(source: PanderaSchema, name: str, column: Any, attributes: set[str]) -> ColumnPlan:
    dtype = source.column_dtype(column)
    kind = column_type(dtype) if dtype is not None else ColumnType("Any")
    options: dict[str, Any] = {} if kind.kind == "Any" else {"nullable": bool(column.nullable)}
    notes = {}
    if kind.is_float:
        options["allow_inf"] = True
        options["allow_nan"] = bool(column.nullable)
        notes["allow_nan"] = "Pandera treats NaN as null: only a nullable column may hold NaN"
    if column.unique:
        options["unique"] = True
    metadata = dict(column.metadata or {})
    if column.title and "title" not in metadata:
        metadata["title"] = column.title
    preferred = source.attribute(name) or name
    base = identifier(preferred, "column")
    plan = ColumnPlan(
        name=name,
        attribute=attribute_name(base, attributes),
        type=kind,
        options=options,
        notes=notes,
        checks=[],
        warned_options=[],
        description=column.description,
        metadata=metadata or None,
    )
    keys: set[str] = set()
    for index, check in enumerate(column.checks):
        _column_check(plan, check, index, keys)
    return plan


def _column_check(plan: ColumnPlan, check: Check, index: int, keys: set[str]) -> None:
    builtin = builtin_name(check)
    if builtin is None:
        description = _description(check, plan.name)
        key = unique_name(identifier(check.name), keys)
        why = f"custom Pandera check {label(check)}, wrapped"
        wrapped = Wrapped(check, plan.name, index)
        plan.checks.append(Entry(key, wrapped, why, description, check.raise_warning))
        return
    form = translate(builtin, check, plan.type.kind)
    if form.native and check.ignore_na and _fits(plan, form.native):
        plan.options.update(form.native)
        if builtin == "str_matches":
            plan.notes["regex"] = "str_matches: Pandera anchors the pattern at the start"
        if check.raise_warning:
            plan.warned_options.extend(form.native)
        return
    if not check.ignore_na:
        why = "ignore_na=False: a null fails this check"
    elif form.native:
        why = "the column already has this option from another check"
    else:
        why = form.why
    template = Template(
        form.template, form.params, nulls_fail=not check.ignore_na, whole_table=form.whole_table
    )
    key = unique_name(identifier(check.name), keys)
    plan.checks.append(Entry(key, template, why, None, check.raise_warning))


def _fits(plan: ColumnPlan, native: dict[str, Any]) -> bool:
    """Whether the options can be added: free, and accepted by the Dataframely column."""
    if set(native) & set(plan.options):
        return False
    try:
        plan.build(**native)
    except (ValueError, TypeError):
        return False
    return True


def _unique_rules(source: PanderaSchema, columns: list[ColumnPlan], taken: set[str]) -> list[Entry]:
    groups = source.unique_groups()
    by_name = {c.name: c for c in columns}
    if len(groups) == 1 and all(not source.schema.columns[c].nullable for c in groups[0]):
        for name in groups[0]:
            by_name[name].options["primary_key"] = True
            by_name[name].notes["primary_key"] = f"Pandera's unique={groups[0]!r}"
        return []
    rules = []
    for group in groups:
        name = unique_name("unique_" + "_".join(identifier(c, "column") for c in group), taken)
        listed = ", ".join(group)
        rules.append(
            Entry(
                name,
                Template("pl.struct({columns}).is_unique()", {"columns": list(group)}),
                why=f"Pandera's unique={group!r}; nulls count as equal values, as in Pandera",
                description=f"Rows are unique across ({listed}).",
            )
        )
    return rules


def _schema_check(check: Check, index: int, name: str, columns: list[str]) -> Entry:
    builtin = builtin_name(check)
    if builtin is None:
        why = f"custom Pandera check {label(check)}, wrapped"
        wrapped = Wrapped(check, "*", index)
        return Entry(name, wrapped, why, _description(check, None), check.raise_warning)
    form = translate(builtin, check, "")
    template = Template(
        form.template, form.params, tuple(columns), not check.ignore_na, form.whole_table
    )
    description = check.description or f"Every column passes {check.error or builtin}."
    why = f"Pandera's dataframe-level {builtin}: on every column of the schema"
    return Entry(name, template, why, description, check.raise_warning)


def _description(check: Check, column: str | None) -> str:
    text = check.description or docstring_summary(origin(check).function)
    if not text:
        where = f" on {column}" if column is not None else ""
        text = f"Pandera check {label(check)}{where}."
    return text.rstrip(".") + _SLOW if check.element_wise else text
