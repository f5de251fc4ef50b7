"""The engine: a Dataframely schema's rules, named, and counted in one streaming pass.

Owns the rule catalogue (the only reader of Dataframely's private rule API, in
`dataframely_internals`), check naming, severity, settings, and the one evaluator that every
entry point calls, with its two backends behind one interface (`backends.Backend`, chosen by
`backend_for`): polars (`evaluate`) and SQL (`sql`, the rules compiled for the database a
source reads; sqlglot is imported only when a pushdown runs).
Knows nothing of Dagster. Imports only `errors`, and `pandera` lazily, so that a Pandera
model is accepted wherever a schema is.
"""
