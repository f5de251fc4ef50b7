"""Failing rows kept as files: where beside a parquet or Delta source, and how one is written
(streamed by a polars sink to a temporary file, then renamed over the last one)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import polars as pl

#: The suffix of the failures table, directory and asset of a checked asset.
SUFFIX = "__dy_failures"


def beside(path: str, *, glob: bool) -> str:
    """`orders.parquet`, `orders/` or `orders/*.parquet` -> `orders__dy_failures`."""
    head = path
    if glob:
        for mark in "*?[":
            head = head.split(mark, 1)[0]
    head = head.rstrip("/")
    stem = head.rsplit("/", 1)
    parent, last = (stem[0], stem[1]) if len(stem) == 2 else ("", stem[0])
    last = last.removesuffix(".parquet")
    return f"{parent}/{last}{SUFFIX}" if parent else f"{last}{SUFFIX}"


def sink_atomically(frame: pl.LazyFrame, directory: str, name: str) -> None:
    """Stream `frame` to `directory/name`: to a temporary file renamed over it locally (a
    reader never sees half a file); an object store's upload is atomic of itself."""
    if "://" in directory:
        frame.sink_parquet(f"{directory.rstrip('/')}/{name}")
        return
    Path(directory).mkdir(parents=True, exist_ok=True)
    temporary = Path(directory, f".{name}.{uuid.uuid4().hex}.tmp")
    try:
        frame.sink_parquet(temporary)
        os.replace(temporary, Path(directory, name))
    finally:
        temporary.unlink(missing_ok=True)
