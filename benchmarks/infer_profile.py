"""Benchmark: what `dd.infer_schema(..., profile=True)` costs beside a hand-written profile.

    .venv/bin/python benchmarks/infer_profile.py [--rows 1000000] [--repeat 5]

A DuckDB table (in memory) of `--rows` rows: an integer key, a bigint, a double, a decimal,
a text column of three values, a text column of distinct values and a date. Printed, in ms
(median of `--repeat` runs after one warm-up): the schema without a profile (catalog and
type queries only), with a profile (those, the aggregate query and the bounded value
queries), and the hand-written aggregate a person would write for the same facts (nulls,
distinct values, min and max; NaN and infinities of the double; the texts' byte lengths),
with the ratio of the profile's cost over it.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

HAND_WRITTEN = """
SELECT COUNT(*),
    COUNT(id), COUNT(DISTINCT id), MIN(id), MAX(id),
    COUNT(amount), COUNT(DISTINCT amount), MIN(amount), MAX(amount),
    COUNT(rate), COUNT(*) FILTER (WHERE rate = 'NaN'::DOUBLE),
    COUNT(*) FILTER (WHERE rate IN ('inf'::DOUBLE, '-inf'::DOUBLE)),
    COUNT(price), COUNT(DISTINCT price), MIN(price), MAX(price),
    COUNT(status), COUNT(DISTINCT status), MIN(STRLEN(status)), MAX(STRLEN(status)),
    COUNT(note), COUNT(DISTINCT note), MIN(STRLEN(note)), MAX(STRLEN(note)),
    COUNT(day), COUNT(DISTINCT day)
FROM orders
"""


def median_ms(action: Callable[[], object], repeat: int) -> float:
    action()  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    import duckdb

    import dagster_dataframely as dd

    connection = duckdb.connect()
    connection.execute(
        f"""
        CREATE TABLE orders AS SELECT
            i::INTEGER AS id,
            (i % 1000)::BIGINT AS amount,
            (i / 7.0)::DOUBLE AS rate,
            (i % 10000 / 100)::DECIMAL(10, 2) AS price,
            ['open', 'paid', 'shipped'][i % 3 + 1] AS status,
            'note ' || i AS note,
            DATE '2024-01-01' + (i % 365)::INTEGER AS day
        FROM range({args.rows}) t(i)
        """
    )
    plain = median_ms(lambda: dd.infer_schema("orders", connection=connection), args.repeat)
    profiled = median_ms(
        lambda: dd.infer_schema("orders", connection=connection, profile=True), args.repeat
    )
    hand = median_ms(lambda: connection.execute(HAND_WRITTEN).fetchall(), args.repeat)
    print(f"rows: {args.rows:,}")
    print(f"infer_schema                 {plain:9.1f} ms")
    print(f"infer_schema(profile=True)   {profiled:9.1f} ms")
    print(f"hand-written profile query   {hand:9.1f} ms")
    print(f"profile / hand-written       {profiled / hand:9.2f}x")
    print(f"(profile - schema) / hand    {(profiled - plain) / hand:9.2f}x")


if __name__ == "__main__":
    main()
