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


@dataclass(frozen=True)
class Manifest:
    adapter: str
    models: Mapping[str, DbtModel]

    def select(self, names: Sequence[str] | None) -> list[DbtModel]:
        """The models `names` selects, each a name, a glob such as `stg_*`, or as in dbt's
        selector syntax `tag:<tag>` (None: all)."""
        if not names:
            return list(self.models.values())
        chosen: dict[str, DbtModel] = {}
        for name in names:
            if name.startswith("tag:"):
                tag = name.removeprefix("tag:")
                found = [m for m, model in self.models.items() if tag in model.tags]
            else:
                found = fnmatch.filter(self.models, name)
            if not found:
                close = difflib.get_close_matches(name, list(self.models), n=3)
                hint = f" Did you mean {', '.join(close)}?" if close else ""
                raise UnknownModelError(
                    f"The dbt manifest has no model {name!r}.{hint} Select one of its "
                    f"{len(self.models)} models by name (or a glob such as 'stg_*', or "
                    "'tag:<tag>'); re-run `dbt parse` if the model is new."
                )
            chosen |= {model: self.models[model] for model in found}
        return list(chosen.values())


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
    models = {
        node["unique_id"]: _model(node)
        for node in raw["nodes"].values()
        if node.get("resource_type") == "model"
    }
    for node in raw["nodes"].values():
        attached = node.get("attached_node")
        if node.get("resource_type") == "test" and attached in models and node.get("test_metadata"):
            models[attached].tests.append(_test(node))
    adapter = str(raw["metadata"].get("adapter_type") or "duckdb")
    return Manifest(adapter, {model.name: model for model in models.values()})


def _model(node: Mapping[str, Any]) -> DbtModel:
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
