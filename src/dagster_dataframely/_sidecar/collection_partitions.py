"""A collection's members hold the same partitions: its filters join them on their keys.
The checks take the members' one `PartitionsDefinition`, found at definition time and
guarded again at run time, when a member's definition may have changed."""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.

from collections.abc import Iterable, Mapping, Sequence

import dagster as dg
import dataframely as dy

from ..errors import MemberPartitionsError
from .collection_members import Member


def member_partitions(
    collection: type[dy.Collection],
    keys: Iterable[dg.AssetKey],
    specs: Mapping[dg.AssetKey, dg.AssetSpec],
) -> dg.PartitionsDefinition | None:
    """The partitions the declared members (`specs`) of `collection` share, for its checks;
    `MemberPartitionsError` when they differ."""
    partitions = {key: specs[key].partitions_def for key in keys if key in specs}
    first = next(iter(partitions.values()), None)
    differing = {k.to_user_string(): p for k, p in partitions.items() if p != first}
    if differing:
        raise MemberPartitionsError(
            f"Collection {collection.__name__}: " + partitions_message(differing, first)
        )
    return first


def guard_partitions(
    context: dg.AssetCheckExecutionContext,
    members: Sequence[Member],
    partitions_def: dg.PartitionsDefinition | None,
) -> None:
    """Refuse to evaluate members whose partitions differ from the checks' `partitions_def`."""
    layer = context.job_def.asset_layer
    differing = {
        member.key.to_user_string(): layer.get(member.key).partitions_def
        for member in members
        if layer.has(member.key) and layer.get(member.key).partitions_def != partitions_def
    }
    if differing:
        raise MemberPartitionsError(partitions_message(differing, partitions_def))


def partitions_message(
    differing: Mapping[str, dg.PartitionsDefinition | None],
    expected: dg.PartitionsDefinition | None,
) -> str:
    listed = "; ".join(f"{key}: {_partitions(p)}" for key, p in differing.items())
    return (
        f"The collection's checks are {_partitions(expected)}, but member asset(s) differ: "
        f"{listed}. Filters join members on their keys, so every member must hold the same "
        "partitions: give all members one PartitionsDefinition (the checks take the members' "
        "partitions, or `partitions_def=` in Python, `partitions_def:` on a YAML entry), or "
        "check the differently partitioned members with dd.schema_checks."
    )


def _partitions(partitions_def: dg.PartitionsDefinition | None) -> str:
    return "unpartitioned" if partitions_def is None else f"partitioned by {partitions_def}"
