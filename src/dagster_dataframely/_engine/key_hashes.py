"""A primary key's repeats found by hashing: a table's keys are hashed and sorted instead of
grouped, so a key rule costs memory in the hashes, not in the keys, and only the rows whose
hash repeats are read again to tell a real repeat from a collision."""

from __future__ import annotations

import polars as pl

from .catalogue import Rule

#: The column of a key's hash.
HASH = "__dy_hash"


def key_hash(keys: tuple[str, ...], bits: int) -> pl.Expr:
    """The keys' hash, its low `bits` bits only when fewer than 64 (a UInt32 up to 32)."""
    full = pl.struct(keys).hash(seed=0x5EED)
    if bits >= 64:
        return full.alias(HASH)
    return (full & ((1 << bits) - 1)).cast(pl.UInt32 if bits <= 32 else pl.UInt64).alias(HASH)


def hashable(schema: pl.Schema, keys: tuple[str, ...]) -> bool:
    """Whether equal keys always hash equally: not for floats (-0.0 equals 0.0, NaN payloads
    differ) nor nested values, whose keys are grouped directly instead."""
    return not any(schema[key].is_float() or schema[key].is_nested() for key in keys)


def repeated_hashes(lf: pl.LazyFrame, keys: tuple[str, ...], bits: int = 64) -> pl.LazyFrame:
    """The `bits`-bit key hashes that occur on more than one row, found by sorting them."""
    hashed = pl.col(HASH)
    repeats = (hashed == hashed.shift(1)) | (hashed == hashed.shift(-1))
    return lf.select(key_hash(keys, bits)).sort(HASH).filter(repeats.fill_null(False)).unique(HASH)


def with_hashes(lf: pl.LazyFrame, rule: Rule, hashes: pl.DataFrame, bits: int = 64) -> pl.LazyFrame:
    """The rows of `lf` whose `bits`-bit key hash is among `hashes`: every row that may
    repeat its key."""
    keys = rule.distinct_over or ()
    return (
        lf.select(*keys, key_hash(keys, bits)).join(hashes.lazy(), on=HASH, how="semi").drop(HASH)
    )
