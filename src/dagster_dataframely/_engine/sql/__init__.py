"""The SQL backend of the evaluator: a schema's rules compiled to SQL and run in the database.

The same catalogue the polars evaluator reads is compiled here into sqlglot expression trees,
rendered per dialect: `rules` compiles Dataframely's column rules from each `Rule`'s kind and
value, `expressions` the polars expressions of custom rules that have an exact SQL form,
`dialects` holds what each database can express exactly, and `backend` runs one aggregate
query per table (a key rule's grouping in `repeated`) and bounded sample queries, then
evaluates every rule without an exact SQL form with the polars evaluator over only the
columns it reads. `pushdown` puts the table behind the engine's `Backend` interface, so both
backends take the same rules and return one `Evaluation`.

sqlglot is imported only by this package and by the SQL sources that build its queries, and
only when a pushdown runs (importing `dagster_dataframely` does not import it). Knows nothing
of Dagster.
"""
