"""Schemas from what a team already has: a table, a parquet or Delta path, a dbt project.

`infer_schema` writes Dataframely source for a table as the package's sources read it;
proposals learned from its rows are comments, never rules, unless a person adopts them
(`adopt=True`): then they are rules, each marked as learned from the data on that day.
`dbt_schemas` writes one schema module per dbt model from its tests and contract, and
`dbt_contract` the reverse: a model's enforced contract from a schema. The console
script's `infer`, `infer-dbt` and `dbt-contract` subcommands print them.
"""

from ._contract import dbt_contract
from ._dbt import dbt_schemas
from ._infer import infer_schema

__all__ = ["dbt_contract", "dbt_schemas", "infer_schema"]
