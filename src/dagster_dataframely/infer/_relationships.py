"""dbt `relationships` tests as filters of Dataframely collections, one collection per model
that has them, in a module beside the models' schema modules (it imports them).

A filter keeps the rows of the model whose column is null or found in the referenced model's
column, as dbt's test passes them; the referenced model is a member `ignored_in_filters`, so
only the model's own rows are removed. A filter needs the model's primary key (a
collection's filters keep keys): a model without one keeps its test as a comment.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .._writing.layout import INDENT, docstring, formatted
from .._writing.literals import string
from .._writing.names import class_name, identifier
from ._columns import InferredTable
from ._manifest import DbtTest

#: The module's name beside the schema modules (`<folder>/relationships.py`).
MODULE = "relationships"
_REF = re.compile(r"""^\s*ref\(\s*['"]([^'"]+)['"]\s*\)\s*$""")


@dataclass(frozen=True)
class Relationship:
    test: DbtTest
    model: str
    column: str
    parent: str
    field: str


def relationships(
    tests: Mapping[str, Sequence[DbtTest]], tables: Mapping[str, InferredTable]
) -> tuple[list[Relationship], dict[str, str]]:
    """The relationships tests that become filters, and why each other one does not (by
    test name)."""
    kept: list[Relationship] = []
    refused: dict[str, str] = {}
    for model, found in tests.items():
        for test in found:
            if test.kind != "relationships":
                continue
            parent = _REF.match(str(test.kwargs.get("to", "")))
            field = test.kwargs.get("field")
            if parent is None or not field or not test.column:
                refused[test.name] = "its `to` is not a ref() of a model"
            elif parent.group(1) not in tables or parent.group(1) == model:
                refused[test.name] = f"model {parent.group(1)!r} is not among those written"
            elif not any(c.primary_key for c in tables[model].columns):
                refused[test.name] = f"a collection filter needs a primary key on {model!r}"
            else:
                kept.append(Relationship(test, model, test.column, parent.group(1), str(field)))
    return kept, refused


def render_collections(found: Sequence[Relationship]) -> str:
    """The module of one collection per model with relationships tests."""
    models = sorted({r.model for r in found} | {r.parent for r in found})
    lines = [
        '"""Dataframely collections of the dbt models\' relationships tests.',
        "",
        "Written by `dagster-dataframely infer-dbt`: each relationships test is a filter that",
        "keeps the rows whose column is null or found in the referenced model; check them",
        "with dd.collection_checks.",
        '"""',
        "",
        "from typing import Annotated",
        "",
        "import dataframely as dy",
        "import polars as pl",
        "",
        *(f"from .{identifier(m, 'model')} import {class_name(m)}" for m in models),
    ]
    for model in sorted({r.model for r in found}):
        mine = [r for r in found if r.model == model]
        lines += ["", "", f"class {class_name(model)}Relationships(dy.Collection):"]
        lines += docstring(
            f"dbt model `{model}` and the models its relationships tests name.", INDENT
        )
        lines.append(f"{INDENT}{identifier(model, 'model')}: dy.LazyFrame[{class_name(model)}]")
        for parent in sorted({r.parent for r in mine}):
            member = f"dy.LazyFrame[{class_name(parent)}]"
            ignored = "dy.CollectionMember(ignored_in_filters=True)"
            lines.append(f"{INDENT}{identifier(parent, 'model')}: Annotated[{member}, {ignored}]")
        for relationship in mine:
            lines += ["", *_filter(relationship)]
    return formatted("\n".join(lines) + "\n")


def _filter(r: Relationship) -> list[str]:
    inner = INDENT * 2
    child, parent = identifier(r.model, "model"), identifier(r.parent, "model")
    column, field = string(r.column), string(r.field)
    doc = (
        f"dbt test `{r.test.name}`: every {r.column} of {r.model} is null or a {r.field} of "
        f"{r.parent}."
    )
    return [
        f"{INDENT}@dy.filter()",
        f"{INDENT}def {identifier(r.test.name, 'relationship')}(self) -> pl.LazyFrame:",
        *docstring(doc, inner),
        f"{inner}known = self.{parent}.select(pl.col({field}).alias({column}))",
        f'{inner}found = self.{child}.join(known, on={column}, how="semi")',
        f"{inner}return pl.concat([found, self.{child}.filter(pl.col({column}).is_null())])",
    ]
