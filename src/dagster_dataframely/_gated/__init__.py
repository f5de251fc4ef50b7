"""The gated asset: `dd.asset` validates its frame before the IO manager writes it, and keeps
the failing rows in a quarantine.

Imports the engine, `_checks` and `io` (the quarantine's parquet writer).
"""
