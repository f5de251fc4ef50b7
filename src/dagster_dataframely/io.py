"""`dd.ParquetIOManager`: polars frames as parquet files, with a lazy loader.

Why this exists: the sidecar checks (`dd.schema_checks`) evaluate a stored table in streaming
aggregations, so they need an IO manager that can hand over a `pl.LazyFrame` scan rather than
a collected frame; the library one (dagster-polars) cannot load on polars 2.x. This one is
deliberately small: one parquet file per asset (or per partition), nothing else.

Layout under `base_dir` (a local path or any fsspec URL universal-pathlib understands):

- unpartitioned asset: `<base_dir>/<key part>/.../<last key part>.parquet`
- partitioned asset: `<base_dir>/<key parts>/<partition key>.parquet`
- multi-partitioned asset: `<base_dir>/<key parts>/<dim>=<key>/.../<dim>=<key>.parquet`, one
  level per dimension in the order of the dimension names (Dagster's own order).

Every path component is a safe file name: the characters `A-Z a-z 0-9 _ - .` are kept, any
other character (and a leading `.`) is written as `~` plus two upper-case hex digits per UTF-8
byte, so the hourly key `2024-01-01-00:00` becomes `2024-01-01-00~3A00` and `a/b` becomes
`a~2Fb`; asset key parts are encoded the same way. `~`, not `%`, because cloud readers
URL-decode `%` in object paths.

Writes are atomic: the file is first written to a temporary file beside it
(`.<name>.parquet.<random>.tmp`), then promoted with a rename, so a failing plan never leaves
a partial file and never replaces an earlier good one. For a remote `base_dir` the file is
staged on local disk, uploaded beside the target under a temporary name, then moved into place
(on object stores the move is a server-side copy).

Reads: a local file is opened once, when the input is loaded, and polars scans that open file.
So a load racing a rewrite of the same asset gets one whole version, the old table or the new
one, and a `LazyFrame` collected later (after another rewrite) still reads the version it was
loaded with; `scan_parquet` streams an open file as it streams a path. For the cloud schemes
polars reads itself (s3, gs, az, ...), the loader hands polars the address and `scan_parquet`
streams it (there a scan is not pinned to one version of the object). Other fsspec schemes
(`memory://`, `sftp://`, ...) are read through fsspec into memory first, because polars cannot
open them; the loader still returns a `LazyFrame` when asked for one. Storage options the URL
carries (universal-pathlib moves the Azure account of `abfs://container@account...` into them)
are passed on to polars; credentials come from the environment, for fsspec (writes) and polars
(reads) alike.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import tempfile
import types
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Union, get_args, get_origin

import dagster as dg
import polars as pl
from pydantic import Field

from ._engine.display import type_name
from .errors import UnsupportedFrameError

if TYPE_CHECKING:  # universal-pathlib loads fsspec: imported when a path is first built
    from upath import UPath

__all__ = ["ParquetIOManager", "takes_lazy_frames"]

_LOCAL_PROTOCOLS = frozenset({"", "file", "local"})
# Schemes polars opens itself (object_store): handing it the URL keeps scans streaming.
_POLARS_NATIVE_PROTOCOLS = frozenset(
    {"s3", "s3a", "gs", "gcs", "gcp", "az", "azure", "adl", "abfs", "abfss", "hf"}
)
_SAFE_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.")


class ParquetIOManager(dg.ConfigurableIOManager):
    """Store `pl.DataFrame` and `pl.LazyFrame` outputs as parquet; load them back lazily.

    - A `DataFrame` output is written with `write_parquet`; a `LazyFrame` output is streamed
      with `sink_parquet`, never collected whole. A `None` output writes nothing; any other
      value is an `UnsupportedFrameError` (a `TypeError`).
    - An input annotated `pl.LazyFrame` (or `pl.LazyFrame | None`) gets a `pl.scan_parquet`
      scan; any other annotation, or none, gets a `pl.DataFrame`. Several partitions of a
      partitioned upstream are concatenated (lazily for a scan). A missing file is a
      `FileNotFoundError` naming the asset, the path and the fix.
    - The output metadata carries `dagster/row_count` (for a plan, read from the written
      file's footer) and `path`, the file's address as a string.
    - The path depends on `context.asset_key` and the partition key only, so a copy of a step's
      context with another asset key (the quarantine table) writes beside the asset.

    Example:
        ```python
        defs = dg.Definitions(
            assets=[orders],
            resources={"io_manager": dd.ParquetIOManager(base_dir="s3://bucket/warehouse")},
        )
        ```
    """

    base_dir: str = Field(
        description="Root of the store: a local path or an fsspec URL (s3://bucket/prefix, ...)."
    )

    def _root(self) -> UPath:
        from upath import UPath

        root = UPath(self.base_dir)
        return root.expanduser().absolute() if root.protocol == "" else root

    def path_for(self, asset_key: dg.AssetKey, partition_key: str | None = None) -> UPath:
        """The file an asset (or one partition of it) is stored in."""
        return parquet_path(self._root(), asset_key, partition_key)

    # ----------------------------------- output ----------------------------------- #

    def handle_output(
        self, context: dg.OutputContext, obj: pl.DataFrame | pl.LazyFrame | None
    ) -> None:
        if obj is None:
            return
        if not isinstance(obj, (pl.DataFrame, pl.LazyFrame)):
            raise UnsupportedFrameError(
                f"ParquetIOManager cannot store a value of type {type_name(obj)} for asset "
                f"{context.asset_key.to_user_string()}: it stores pl.DataFrame and pl.LazyFrame "
                "only. Return a polars frame (e.g. pl.from_pandas(df) for a pandas frame), or "
                "give this asset another IO manager."
            )
        target = self.path_for(context.asset_key, _output_partition(context))
        row_count = write_frame(obj, target)
        context.add_output_metadata({"dagster/row_count": row_count, "path": str(target)})

    # ------------------------------------ input ----------------------------------- #

    def load_input(self, context: dg.InputContext) -> pl.DataFrame | pl.LazyFrame:
        keys: Sequence[str | None] = (
            _partition_keys(context) if context.has_asset_partitions else [None]
        )
        scans = [self._scan(context.asset_key, key) for key in keys]
        scan = scans[0] if len(scans) == 1 else pl.concat(scans)
        return scan if _wants_lazy(context) else scan.collect()

    def _scan(self, asset_key: dg.AssetKey, partition_key: str | None) -> pl.LazyFrame:
        path = self.path_for(asset_key, partition_key)
        try:
            if path.protocol in _LOCAL_PROTOCOLS:
                # One open for the whole read: polars keeps its own handle on this file, so
                # the scan reads the version it was given even after a rewrite replaces it.
                with open(path.path, "rb") as file:
                    return _scan_parquet(file, None)
            if not path.exists():
                raise FileNotFoundError(path)
            return _scan_parquet(*_polars_source(path))
        except FileNotFoundError:
            asset = asset_key.to_user_string()
            what = asset if partition_key is None else f"{asset} (partition {partition_key})"
            raise FileNotFoundError(
                f"No stored parquet file for asset {what}: {path} does not exist. Materialize "
                f"{what} first, with this IO manager (ParquetIOManager(base_dir="
                f"{self.base_dir!r})), then run this step again."
            ) from None


# ------------------------------------- helpers ------------------------------------- #


def takes_lazy_frames(io_manager: Any) -> bool:
    """Whether `io_manager` stores a `pl.LazyFrame` output itself (streaming it, as this
    module's `ParquetIOManager` does): its `handle_output` annotates the value it takes with
    `pl.LazyFrame` (alone or in a union). Other IO managers are handed collected frames."""
    handle_output = getattr(io_manager, "handle_output", None)
    if handle_output is None:
        return False
    try:
        parameters = list(inspect.signature(handle_output).parameters.values())
    except (TypeError, ValueError):
        return False
    if len(parameters) < 2:
        return False
    annotation = parameters[1].annotation
    if isinstance(annotation, str):  # postponed annotations: read the text, import nothing
        return "LazyFrame" in annotation
    return _is_lazy_type(annotation)


def parquet_path(root: UPath, asset_key: dg.AssetKey, partition_key: str | None = None) -> UPath:
    """Where under `root` the parquet file of an asset (or of one partition) lives."""
    parts = [_safe_name(part) for part in asset_key.path]
    if partition_key is None:
        return root.joinpath(*parts[:-1], f"{parts[-1]}.parquet")
    if isinstance(partition_key, dg.MultiPartitionKey):
        dims = sorted(partition_key.keys_by_dimension.items())
        levels = [f"{_safe_name(dim)}={_safe_name(key)}" for dim, key in dims]
    else:
        levels = [_safe_name(partition_key)]
    return root.joinpath(*parts, *levels[:-1], f"{levels[-1]}.parquet")


def write_frame(obj: pl.DataFrame | pl.LazyFrame, target: UPath) -> int:
    """Write `obj` to `target` atomically and return its row count: a failed write leaves
    neither a partial file nor a changed previous one."""
    if target.protocol in _LOCAL_PROTOCOLS:
        return _write_local(obj, target.path)
    return _write_remote(obj, target)


def _safe_name(text: str) -> str:
    out = []
    for i, char in enumerate(text):
        if char in _SAFE_CHARS and not (i == 0 and char == "."):
            out.append(char)
        else:
            out.extend(f"~{byte:02X}" for byte in char.encode("utf-8"))
    return "".join(out) or "~"


def _output_partition(context: dg.OutputContext) -> str | None:
    if not context.has_asset_partitions:
        return None
    keys = _partition_keys(context)
    if len(keys) != 1:
        raise ValueError(
            f"ParquetIOManager stores one file per partition, but the run for asset "
            f"{context.asset_key.to_user_string()} covers {len(keys)} partitions at once. "
            "Launch one run per partition (the default backfill policy) instead."
        )
    return keys[0]


def _partition_keys(context: dg.InputContext | dg.OutputContext) -> list[str]:
    """The context's partition keys, as `MultiPartitionKey`s for a multi-partitioned asset."""
    keys = list(context.asset_partition_keys)
    with contextlib.suppress(dg.DagsterInvariantViolationError):  # no partitions def known
        partitions_def = context.asset_partitions_def
        if isinstance(partitions_def, dg.MultiPartitionsDefinition):
            return [partitions_def.get_partition_key_from_str(key) for key in keys]
    return keys


def _wants_lazy(context: dg.InputContext) -> bool:
    try:
        typing_type = context.dagster_type.typing_type
    except dg.DagsterInvariantViolationError:  # a hand-built context without a type
        return False
    return _is_lazy_type(typing_type)


def _is_lazy_type(typing_type: Any) -> bool:
    origin = get_origin(typing_type)
    if origin is Union or origin is types.UnionType:
        return any(_is_lazy_type(arg) for arg in get_args(typing_type))
    cls = origin or typing_type
    return isinstance(cls, type) and issubclass(cls, pl.LazyFrame)


def _polars_source(path: UPath) -> tuple[Any, dict[str, Any] | None]:
    """What to hand polars for reading remote `path`, and the storage options that go with it."""
    if path.protocol in _POLARS_NATIVE_PROTOCOLS:
        return str(path), dict(path.storage_options) or None
    return path.read_bytes(), None  # polars cannot open this scheme: read it through fsspec


def _scan_parquet(source: Any, storage_options: dict[str, Any] | None) -> pl.LazyFrame:
    return pl.scan_parquet(
        source, storage_options=storage_options, glob=False, hive_partitioning=False
    )


def _write_parquet(obj: pl.DataFrame | pl.LazyFrame, local_path: str) -> int:
    """Write `obj` to a new local file, flushed to disk, and return its row count.

    polars gets a file this function opened, not the path: given a path, a failing
    `sink_parquet` can create the file only after it has raised (seen on polars 2.1), which
    would outrun any clean-up.
    """
    with open(local_path, "xb") as file:
        if isinstance(obj, pl.DataFrame):
            obj.write_parquet(file)
        else:
            obj.sink_parquet(file)
        file.flush()
        os.fsync(file.fileno())
    if isinstance(obj, pl.DataFrame):
        return obj.height
    return int(pl.scan_parquet(local_path).select(pl.len()).collect().item())  # footer only


def _write_local(obj: pl.DataFrame | pl.LazyFrame, target: str) -> int:
    directory, name = os.path.split(target)
    os.makedirs(directory, exist_ok=True)
    tmp = os.path.join(directory, f".{name}.{uuid.uuid4().hex}.tmp")
    try:
        row_count = _write_parquet(obj, tmp)
        os.replace(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)
    return row_count


def _write_remote(obj: pl.DataFrame | pl.LazyFrame, target: UPath) -> int:
    fs = target.fs
    remote_tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp")
    with tempfile.TemporaryDirectory(prefix="dagster-dataframely-") as staging:
        local = os.path.join(staging, target.name)
        row_count = _write_parquet(obj, local)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            fs.put_file(local, remote_tmp.path)
            fs.mv(remote_tmp.path, target.path)
        finally:
            with contextlib.suppress(OSError):  # never hide the error that got us here
                if fs.exists(remote_tmp.path):
                    fs.rm(remote_tmp.path)
    return row_count
