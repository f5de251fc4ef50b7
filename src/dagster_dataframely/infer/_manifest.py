"""A dbt project's `manifest.json`, read for what it declares of its models: columns with
their contract's `data_type` and constraints, and the data tests attached to each model.

Manifest schema versions 9 to 12 are read (written by dbt 1.5 and later: the first with
model contracts and constraints).
"""

from __future__ import annotations

import difflib
import fnmatch
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UnknownModelError, UnsupportedManifestError

#: The manifest schema versions read here, and the dbt releases that write them.
VERSIONS = range(9, 13)
_WRITERS = "dbt 1.5 or later"


@dataclass(frozen=True)
class DbtTest:
    """A data test attached to a model (or one of its columns)."""

    name: str
    kind: str
    namespace: str | None
    column: str | None
    kwargs: Mapping[str, Any]
    severity: str
    warn_if: str
    error_if: str

    @property
    def label(self) -> str:
        return f"{self.namespace}.{self.kind}" if self.namespace else self.kind


@dataclass(frozen=True)
class DbtColumn:
    name: str
    data_type: str | None
    constraints: frozenset[str]


@dataclass(frozen=True)
class DbtModel:
    """A model: its relation, its declared columns, its contract and its tests."""

    name: str
    relation: str
    columns: Mapping[str, DbtColumn]
    enforced: bool
    primary_key: Sequence[str]
    tests: list[DbtTest] = field(default_factory=list)
    tags: frozenset[str] = frozenset()
    #: The models it selects from (`ref`), by name.
    parents: frozenset[str] = frozenset()
    #: Its file in the project (`models/staging/stg_orders.sql`).
    path: str = ""


@dataclass(frozen=True)
class Manifest:
    adapter: str
    models: Mapping[str, DbtModel]

    def select(self, names: Sequence[str] | None) -> list[DbtModel]:
        """The models `names` selects (None: all), in dbt's selector syntax: each item (or
        word of an item) adds models; within one, `a,b` keeps the models both select. A
        selector is a model name or glob (`stg_*`), `tag:<tag>` or `path:<folder or file>`,
        with graph operators: `+name` adds its ancestors, `name+` its descendants (`2+name`,
        `name+1`: that many generations)."""
        if not names:
            return list(self.models.values())
        chosen: dict[str, None] = {}
        for item in (word for name in names for word in name.split()):
            parts = [self._selected(part) for part in item.split(",")]
            chosen |= dict.fromkeys(m for m in self.models if all(m in p for p in parts))
        return [self.models[name] for name in chosen]

    def _selected(self, selector: str) -> set[str]:
        """The model names of one selector (`+tag:core+`, `orders`, `path:models/staging`)."""
        graph = _GRAPH.fullmatch(selector)
        assert graph is not None  # every text matches: the operators are optional
        up, method, down = graph.group("up"), graph.group("method"), graph.group("down")
        found = self._method(method)
        if not found:
            close = difflib.get_close_matches(method, list(self.models), n=3)
            hint = f" Did you mean {', '.join(close)}?" if close else ""
            raise UnknownModelError(
                f"The dbt manifest has no model {method!r}.{hint} Select one of its "
                f"{len(self.models)} models by name (or a glob such as 'stg_*', 'tag:<tag>', "
                "'path:<folder>', with dbt's + operators); re-run `dbt parse` if the model "
                "is new."
            )
        selected = set(found)
        if up is not None:
            selected |= self._generations(found, _depth(up.rstrip("+")), upward=True)
        if down is not None:
            selected |= self._generations(found, _depth(down.lstrip("+")), upward=False)
        return selected

    def _method(self, method: str) -> list[str]:
        if method.startswith("tag:"):
            tag = method.removeprefix("tag:")
            return [m for m, model in self.models.items() if tag in model.tags]
        if method.startswith("path:"):
            path = method.removeprefix("path:").rstrip("/")
            return [
                m
                for m, model in self.models.items()
                if model.path == path
                or model.path.startswith(f"{path}/")
                or fnmatch.fnmatch(model.path, path)
            ]
        return fnmatch.filter(self.models, method)

    def _generations(self, start: list[str], depth: int | None, *, upward: bool) -> set[str]:
        """The models up to `depth` generations (None: all) above or below `start`."""
        children: dict[str, set[str]] = {}
        for name, model in self.models.items():
            for parent in model.parents:
                children.setdefault(parent, set()).add(name)
        found: set[str] = set()
        frontier, generation = set(start), 0
        while frontier and (depth is None or generation < depth):
            generation += 1
            step = {
                n
                for m in frontier
                for n in (self.models[m].parents if upward else children.get(m, ()))
            }
            frontier = step - found - set(start)
            found |= frontier
        return found & set(self.models)


#: A dbt selector with its optional graph operators: `2+`, the method, `+1`.
_GRAPH = re.compile(r"(?P<up>\d*\+)?(?P<method>.+?)(?P<down>\+\d*)?")


def _depth(digits: str) -> int | None:
    return int(digits) if digits else None


def read_manifest(path: Path) -> Manifest:
    """The models of the manifest at `path` and their tests; refuses an unknown version."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        schema = str(raw["metadata"]["dbt_schema_version"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise UnsupportedManifestError(
            f"{path} is not a dbt manifest ({type(error).__name__}: {error}). Give the "
            "manifest.json that `dbt parse` writes into the project's target/ folder."
        ) from error
    found = re.search(r"/manifest/v(\d+)\.json$", schema)
    version = int(found.group(1)) if found else None
    if version not in VERSIONS:
        raise UnsupportedManifestError(
            f"{path} is a dbt manifest of schema {schema}, and this package reads versions "
            f"v{VERSIONS.start} to v{VERSIONS.stop - 1} ({_WRITERS}). Re-run `dbt parse` with "
            f"{_WRITERS} to write a manifest it reads."
        )
    names = {
        node["unique_id"]: node["name"]
        for node in raw["nodes"].values()
        if node.get("resource_type") == "model"
    }
    models = {
        node["unique_id"]: _model(node, names)
        for node in raw["nodes"].values()
        if node.get("resource_type") == "model"
    }
    for node in raw["nodes"].values():
        attached = node.get("attached_node")
        if node.get("resource_type") == "test" and attached in models and node.get("test_metadata"):
            models[attached].tests.append(_test(node))
    adapter = str(raw["metadata"].get("adapter_type") or "duckdb")
    return Manifest(adapter, {model.name: model for model in models.values()})


def _model(node: Mapping[str, Any], names: Mapping[str, str]) -> DbtModel:
    columns = {
        name: DbtColumn(
            name=name,
            data_type=column.get("data_type") or None,
            constraints=frozenset(c["type"] for c in column.get("constraints") or ()),
        )
        for name, column in (node.get("columns") or {}).items()
    }
    keyed = [name for name, column in columns.items() if "primary_key" in column.constraints]
    for constraint in node.get("constraints") or ():
        if constraint.get("type") == "primary_key":
            keyed = list(constraint.get("columns") or keyed)
    relation = node.get("relation_name") or ".".join(
        part for part in (node.get("schema"), node.get("alias") or node["name"]) if part
    )
    return DbtModel(
        name=node["name"],
        relation=relation,
        columns=columns,
        enforced=bool((node.get("contract") or {}).get("enforced")),
        primary_key=keyed,
        tests=[],
        tags=frozenset(node.get("tags") or ()),
        parents=frozenset(
            names[u] for u in (node.get("depends_on") or {}).get("nodes") or () if u in names
        ),
        path=str(node.get("original_file_path") or ""),
    )


def _test(node: Mapping[str, Any]) -> DbtTest:
    metadata, config = node["test_metadata"], node.get("config") or {}
    return DbtTest(
        name=node["name"],
        kind=metadata["name"],
        namespace=metadata.get("namespace"),
        column=node.get("column_name") or metadata.get("kwargs", {}).get("column_name"),
        kwargs={k: v for k, v in (metadata.get("kwargs") or {}).items() if k != "model"},
        severity=str(config.get("severity") or "error").lower(),
        warn_if=str(config.get("warn_if") or "!= 0"),
        error_if=str(config.get("error_if") or "!= 0"),
    )
