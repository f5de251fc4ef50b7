"""Template variables for a `defs.yaml`: the Columns tab of assets another component defines.

`SchemaChecksComponent` adds checks, and cannot change an asset that a dbt project or another
component defines. Dagster's `post_processing` can, from the `defs.yaml` of a folder above
the asset (or of the component that defines it). Name this module there as
`template_vars_module`:

```yaml
type: dagster.DefsFolderComponent
template_vars_module: dagster_dataframely.template_vars
post_processing:
  assets:
    - target: "*"
      attributes:
        metadata: "{{ dd_checked_columns(asset) }}"
```

`dd_checked_columns(asset)` is the Columns tab of the schema the project's
`SchemaChecksComponent`s check `asset` against (nothing for an asset they do not check);
`dd_column_schema('package.module:Class')` is one schema's `dagster/column_schema` value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import dagster as dg
import dataframely as dy

from ._checks.asset_keys import parse_asset_key
from ._checks.metadata import schema_metadata, table_schema
from ._sidecar.component import SchemaChecksComponent, schema_at
from ._sidecar.component_tree import ComponentDeclLoadContext, components_of

__all__ = ["dd_checked_columns", "dd_column_schema"]


@dg.template_var
def dd_column_schema() -> Callable[[str], dg.TableSchema]:
    """`{{ dd_column_schema('package.module:Class') }}`: the schema's columns, as the value
    of `dagster/column_schema`."""
    return lambda reference: table_schema(schema_at(reference))


@dg.template_var
def dd_checked_columns(
    context: ComponentDeclLoadContext,
) -> Callable[[dg.AssetSpec], dict[str, dg.TableSchema]]:
    """`{{ dd_checked_columns(asset) }}`: `{"dagster/column_schema": ...}` of the schema the
    project's `SchemaChecksComponent`s check `asset` against, `{}` for an asset they do not
    check. The entries are read once per load of the `defs.yaml`."""
    checked: dict[dg.AssetKey, type[dy.Schema]] | None = None

    def columns(asset: dg.AssetSpec) -> dict[str, dg.TableSchema]:
        nonlocal checked
        if checked is None:
            checked = checked_schemas(context)
        schema = checked.get(asset.key)
        return schema_metadata(schema) if schema else {}

    return columns


def checked_schemas(context: ComponentDeclLoadContext) -> dict[dg.AssetKey, type[dy.Schema]]:
    """Every asset the project's `SchemaChecksComponent`s check, with its schema: `checks`
    entries first, then the members of `collections` entries."""
    schemas: dict[dg.AssetKey, type[dy.Schema]] = {}
    components: list[Any] = [c for _, c in components_of(context, SchemaChecksComponent)]
    for component in components:
        for entry in component.checks:
            schemas.setdefault(entry.asset, entry.schema)
    for component in components:
        for group in component.collections:
            members = group.collection.member_schemas()
            for member, key in group.members.items():
                schemas.setdefault(parse_asset_key(key), members[member])
    return schemas
