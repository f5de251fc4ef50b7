"""Schemas from what a team already has: a table, a parquet or Delta path, a dbt project.

`infer_schema` writes Dataframely source for a table as the package's sources read it;
proposals learned from its rows are comments, never rules. The console script's `infer`
subcommand prints it.
"""

from ._infer import infer_schema

__all__ = ["infer_schema"]
