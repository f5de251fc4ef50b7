"""The one reading of an asset key every entry point accepts.

A string is the key's user string, as Dagster's UI and CLI print it (`"raw/orders"` ->
`["raw", "orders"]`), an `AssetKey` is itself, a sequence of strings is the key's parts, and
an asset's own definition (`dg.AssetsDefinition` of one asset, `dg.AssetSpec`) is its key:
the spelling a typo cannot break.
Dagster's own `AssetKey.from_coercible` reads a string as one part instead, which would make
`asset="raw/orders"` a different key here than in `dd.with_schemas` or a `defs.yaml`.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable, Sequence
from typing import TypeAlias

import dagster as dg

from ..errors import InvalidAssetKeyError

#: What an argument naming an asset accepts.
AssetKeyLike: TypeAlias = "dg.AssetKey | str | Sequence[str] | dg.AssetsDefinition | dg.AssetSpec"


def parse_asset_key(value: AssetKeyLike, *, argument: str = "asset") -> dg.AssetKey:
    """The `AssetKey` `value` names; `argument` is the parameter it came from, for the error.

    Raises `InvalidAssetKeyError` for any other value and for a key with an empty part.
    """
    if isinstance(value, dg.AssetKey):
        return value
    if isinstance(value, dg.AssetSpec):
        return value.key
    if isinstance(value, dg.AssetsDefinition):
        return _only_key(value, argument)
    if isinstance(value, str):
        parts = dg.AssetKey.from_user_string(value).path
    elif isinstance(value, Sequence) and all(isinstance(part, str) for part in value):
        parts = list(value)
    else:
        raise InvalidAssetKeyError(
            f"{argument}={value!r} is not an asset key. Pass the asset's definition (its "
            "@dg.asset or dg.AssetSpec), a dg.AssetKey, its user string ('raw/orders') or its "
            "parts (['raw', 'orders'])."
        )
    if not parts or not all(parts):
        raise InvalidAssetKeyError(
            f"{argument}={value!r} has an empty key part. Write a key as 'prefix/name' (no "
            "leading, trailing or doubled '/'), or pass its parts (['prefix', 'name'])."
        )
    return dg.AssetKey(parts)


def _only_key(assets_def: dg.AssetsDefinition, argument: str) -> dg.AssetKey:
    """The key of an asset definition that defines exactly one asset."""
    keys = sorted(assets_def.keys, key=lambda key: key.to_user_string())
    if len(keys) == 1:
        return keys[0]
    name = assets_def.node_def.name if assets_def.is_executable else "this definition"
    if not keys:
        raise InvalidAssetKeyError(
            f"{argument}={name} defines no asset (it holds only asset checks). Pass the "
            "definition of the asset to check, or its key."
        )
    listed = ", ".join(key.to_user_string() for key in keys)
    raise InvalidAssetKeyError(
        f"{argument}={name} is a multi-asset of {len(keys)} assets ({listed}): say which one "
        f"to check by its key, e.g. {argument}={keys[0].to_user_string()!r}, or by its spec "
        f"from {name}.specs."
    )


def closest_keys(key: dg.AssetKey, known: Iterable[dg.AssetKey], *, count: int = 3) -> list[str]:
    """The user strings of up to `count` keys of `known` most like `key`, for a "did you
    mean" in an error."""
    names = sorted({candidate.to_user_string() for candidate in known})
    return difflib.get_close_matches(key.to_user_string(), names, n=count, cutoff=0.5)


def undeclared_message(key: dg.AssetKey, declared: Collection[dg.AssetKey], *, by: str) -> str:
    """What is wrong with checks on `key` when the code location declares only `declared`,
    and the fix; `by` is the call that made them, with `{key}` where the key goes."""
    closest = closest_keys(key, declared)
    hint = f" Closest declared keys: {', '.join(closest)}." if closest else ""
    call = by.format(key=repr(key.to_user_string()))
    return (
        f"{call} checks an asset that no definition of this code location declares (it "
        f"declares {len(declared)} asset(s)); Dagster would show it as a stub asset that "
        f"nothing materializes.{hint} Fix the key (a key with a prefix is written "
        "'prefix/name'), pass the asset's definition itself (its @dg.asset or dg.AssetSpec) "
        "instead of its key, or declare the table with dg.AssetSpec(key) when another tool makes "
        "it."
    )


def listed_keys(keys: Iterable[dg.AssetKey], *, limit: int = 50) -> str:
    """`keys` as sorted user strings, at most `limit` of them, for an error message."""
    names = sorted(key.to_user_string() for key in keys)
    listed = ", ".join(names[:limit]) or "(none)"
    if len(names) > limit:
        listed += f", … and {len(names) - limit} more"
    return listed
