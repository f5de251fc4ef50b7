"""The entries of a `SchemaChecksComponent`'s `defs.yaml`, as Dagster resolves them: a
`checks:` entry (`SchemaCheck`), a `collections:` entry (`CollectionCheck`) and a `source:`
(`SourceConfig`), with the `package.module:Class` references they import.

A reference that does not import, or a source of an unknown kind, fails with a message that
says what to write; the component adds the file and the entry.
"""

# No `from __future__ import annotations`: Dagster derives the YAML model from the annotations.
import difflib
import importlib
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, cast, get_args

import dagster as dg
import dataframely as dy
from pydantic import BaseModel, create_model, model_validator

from .._checks.asset_keys import parse_asset_key
from .._engine.schemas import as_dataframely
from .._engine.table_checks import refuse_bare_bound
from ..errors import InvalidSourceError, UnsupportedSchemaError
from ..sources import Source, SourceKind, source_from_config
from .component_tree import PartitionsField

Granularity = Literal["rule", "column", "schema"]
SchemaRules = Literal["collapsed", "per_rule"]


def schema_at(reference: str) -> type[dy.Schema]:
    """The schema a `package.module:Class` reference names (a Pandera model, translated)."""
    return as_dataframely(_imported("schema", reference))


def _bounds(value: Any) -> Any:
    refuse_bare_bound(value, where="expect_rows", yaml=True)
    return value


def _import_schema(context: dg.ResolutionContext, reference: str) -> type[dy.Schema]:
    return schema_at(reference)


def _import_collection(context: dg.ResolutionContext, reference: str) -> type[dy.Collection]:
    """The `dy.Collection` a `package.module:Class` reference names."""
    target = _imported("collection", reference)
    if not (isinstance(target, type) and issubclass(target, dy.Collection)):
        raise UnsupportedSchemaError(
            f"collection: {reference!r} is not a dataframely.Collection subclass. Name a "
            "collection here; a single table's schema goes in `checks:`."
        )
    return target


def _imported(field: str, reference: str) -> Any:
    """The object a `package.module:Class` reference in YAML field `field` names."""
    module_name, colon, attribute = reference.partition(":")
    if not colon or not module_name or not attribute:
        raise UnsupportedSchemaError(
            f"{field}: {reference!r} is not a reference. Write 'package.module:Class', "
            "e.g. 'my_project.schemas:Orders'."
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise UnsupportedSchemaError(
            f"{field}: {reference!r} cannot be imported: module {module_name!r} was not found "
            f"({error}). Check the module path and that its package is installed in the "
            "project's environment."
        ) from None
    target: Any = module
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise UnsupportedSchemaError(
                f"{field}: {reference!r} cannot be imported: module {module_name!r} has no "
                f"{attribute!r}. Check the class name after the ':'."
            )
        target = getattr(target, part)
    return target


@dataclass
class SourceConfig(dg.Resolvable):
    """Where an entry's table is read from, when not through the asset's IO manager."""

    kind: SourceKind
    resource_key: str | None = None
    table: str | None = None
    partition_expr: str | None = None
    pushdown: bool | None = None
    dialect: str | None = None
    path: str | None = None
    format: str | None = None
    storage_options: dict[str, str] | None = None
    function: str | None = None
    resource_keys: Sequence[str] = ()
    io_manager_key: str | None = None

    def build(self, field: str = "source") -> Source:
        """The source; `field` is where the YAML holds it (`sources.bills` for a collection
        member), named in every message of a source it cannot build."""
        kinds = get_args(SourceKind)
        if self.kind not in kinds:
            close = difflib.get_close_matches(self.kind, kinds, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise InvalidSourceError(
                f"{field}: kind {self.kind!r} is not a source kind.{hint} The kinds are "
                f"{', '.join(map(repr, kinds))}."
            )
        fields = {name: value for name, value in vars(self).items() if name != "kind"}
        try:
            return source_from_config(self.kind, fields)
        except InvalidSourceError as error:
            raise InvalidSourceError(f"{field}: {error}") from None


@dataclass
class SchemaCheck(dg.Resolvable):
    """One asset and the schema its stored table is checked against."""

    asset: Annotated[
        dg.AssetKey,
        dg.Resolver(
            lambda context, key: parse_asset_key(context.resolve_value(key)),
            model_field_type=str | list[str],
            description="The asset's key, as 'prefix/name' or a list of its parts.",
            examples=["raw/orders"],
        ),
    ]
    schema: Annotated[
        type[dy.Schema],
        dg.Resolver(
            _import_schema,
            model_field_type=str,
            description="The schema, as 'package.module:Class' (a Dataframely schema or a "
            "Pandera polars model).",
            examples=["my_project.schemas:Orders"],
        ),
    ]
    warn: str | Sequence[str] = ()
    #: `{rule or column: {warn_above: 10, error_above: "1%"}}`, as `tolerate=` takes it.
    tolerate: dict[str, dict[str, int | float | str]] | None = None
    #: `{min: 1, max: 1000000, severity: warn}`, as `expect_rows=` takes it. The YAML schema
    #: lets a bare number through, refused at its line with the forms that say which bound.
    expect_rows: Annotated[
        Mapping[str, int | str] | None,
        dg.Resolver(
            lambda context, value: _bounds(context.resolve_value(value)),
            model_field_type=dict[str, int | str] | int | None,
        ),
    ] = None
    #: `{column: ordered_at, within: 6h, severity: warn, time_zone: Europe/Berlin}`.
    expect_fresh: dict[str, str | int | float] | None = None
    #: `{window: 20, k: 3, min_history: 5, severity: warn}`, as `trends=` takes it.
    trends: dict[str, int | float | str] | None = None
    blocking: bool | None = None
    check_granularity: Granularity | None = None
    schema_rules: SchemaRules | None = None
    max_failure_samples: int | None = None
    name: str | None = None
    source: SourceConfig | None = None
    partitions_def: PartitionsField = None
    read_dtypes: Literal["strict", "cast"] | None = None
    #: True, or the schema or directory the failing rows are kept in (`keep_failing_rows=`).
    keep_failing_rows: bool | str | None = None
    max_failing_rows: int | None = None
    #: Observe every check's failing fraction per run, for the asset's Plots tab.
    observe_fractions: bool | None = None

    @classmethod
    def model(cls) -> type[BaseModel]:
        return known_keys(quiet_model(super().model), "checks")


@dataclass
class CollectionCheck(dg.Resolvable):
    """A collection and the asset that stores each of its members."""

    collection: Annotated[
        type[dy.Collection],
        dg.Resolver(
            _import_collection,
            model_field_type=str,
            description="The dataframely.Collection, as 'package.module:Class'.",
            examples=["my_project.schemas:Shop"],
        ),
    ]
    members: Mapping[str, str]
    #: Where a member's table is read from, by member name, as `source:` of a `checks:` entry.
    sources: dict[str, SourceConfig] | None = None
    warn: Sequence[str] = ()
    blocking: bool | None = None
    skip_schema_checks: Sequence[str] = ()
    check_granularity: Granularity | None = None
    schema_rules: SchemaRules | None = None
    max_failure_samples: int | None = None
    name: str | None = None
    #: By default the members' partitions, which must agree.
    partitions_def: PartitionsField = None
    read_dtypes: Literal["strict", "cast"] | None = None
    keep_failing_rows: bool | str | None = None
    max_failing_rows: int | None = None
    #: Observe every check's failing fraction per run, for the asset's Plots tab.
    observe_fractions: bool | None = None
    #: `{window: 20, k: 3}`: each member's trend check, as `trends=` takes it.
    trends: dict[str, int | float | str] | None = None

    @classmethod
    def model(cls) -> type[BaseModel]:
        return known_keys(super().model(), "collections")


def quiet_model(derive: Any) -> type[BaseModel]:
    # The YAML key is `schema`, which pydantic warns shadows the deprecated `BaseModel.schema`.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message='Field name "schema"', category=UserWarning)
        return derive()


def known_keys(
    model: type[BaseModel], field: str | None, *, elsewhere: Mapping[str, str] | None = None
) -> type[BaseModel]:
    """`model` (of an entry of the component's `field`, or of its attributes when None),
    refusing an unknown key with the closest known one, or the closest key another level
    takes (`elsewhere`: key -> where it goes), where pydantic alone says only "Extra inputs
    are not permitted"."""
    keys = list(model.model_fields)
    where, holder = (
        (f"an entry of {field}:", "an entry") if field else ("attributes:", "attributes")
    )

    def refuse_unknown(value: Any) -> Any:
        unknown = [key for key in value if key not in keys] if isinstance(value, Mapping) else []
        if unknown:
            hints = "".join(_closest(str(key), keys, elsewhere or {}) for key in unknown)
            shown = ", ".join(map(repr, unknown))
            raise ValueError(
                f"{where} has key(s) {shown} that it does not take.{hints} The keys of "
                f"{holder} are {', '.join(keys)}."
            )
        return value

    return create_model(
        model.__name__,
        __base__=model,
        __validators__={
            "refuse_unknown": cast(Any, model_validator(mode="before")(refuse_unknown))
        },
    )


def _closest(key: str, keys: Sequence[str], elsewhere: Mapping[str, str]) -> str:
    """The hint for an unknown `key`: the closest of `keys`, else of the keys `elsewhere`
    takes, with where those go."""
    if close := difflib.get_close_matches(key, keys, n=1, cutoff=0.6):
        return f" Did you mean {close[0]!r} for {key!r}?"
    if close := difflib.get_close_matches(key, list(elsewhere), n=1, cutoff=0.6):
        return f" Did you mean {close[0]!r} for {key!r}? It is a key of {elsewhere[close[0]]}"
    return ""


def entry_keys(attributes: type[BaseModel]) -> dict[str, str]:
    """The keys an entry of `checks:` takes that the component's `attributes` do not, each
    with where it goes, for the hint at a misspelled key beside `checks:`."""
    taken = SchemaCheck.model().model_fields
    return {
        key: "each entry of checks:, not of attributes."
        for key in taken
        if key not in attributes.model_fields
    }


def entries_listed(model: type[BaseModel], *fields: str) -> type[BaseModel]:
    """`model`, whose JSON schema (what `dg check yaml` validates against) takes each of
    `fields` as a list only, not also as one template string.

    Dagster lets every field be a `{{ template }}` string, so a list of entries is "a list or a
    string", and jsonschema reports a typo inside an entry (`schemas:` for `schema:`) as the
    whole list being "not valid under any of the given schemas". A list alone is reported at
    the entry: the unexpected key and the required one, with the entry's line.
    """
    given = model.model_config.get("json_schema_extra")

    def listed(schema: dict[str, Any]) -> None:
        if isinstance(given, dict):
            schema.update(given)
        for name in fields:
            field = schema["properties"][name]
            lists = [option for option in field.pop("anyOf", []) if option.get("type") == "array"]
            field.update(lists[0] if lists else {})

    model.model_config["json_schema_extra"] = listed
    return model
