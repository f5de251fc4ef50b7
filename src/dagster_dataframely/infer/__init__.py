"""Schemas from what a team already has: a table, a parquet or Delta path, a dbt project.

`infer_schema` writes Dataframely source for a table as the package's sources read it;
proposals learned from its rows are comments, never rules. `dbt_schemas` writes one schema
module per dbt model from its tests and contract. The console script's `infer` and
`infer-dbt` subcommands print them.
"""

from ._dbt import dbt_schemas
from ._infer import infer_schema

__all__ = ["dbt_schemas", "infer_schema"]
