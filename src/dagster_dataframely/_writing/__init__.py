"""Python source text of Dataframely schemas: literals, column types and ruff's layout.

Shared by every part of the package that writes a schema module (the Pandera migration, the
schemas inferred from tables and dbt projects). Imports nothing else of the package.
"""
