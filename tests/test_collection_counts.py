"""Property: the collection checks count what `Collection.filter(..., cast=False)` removes.

Frames are generated with null foreign keys, duplicated primary keys (which fail the member's
own rule and so never reach the filters), orphan lines and orders without lines; each
member's rule counts and each filter's count must equal Dataframely's `failure.counts()`.
"""

from __future__ import annotations

import dagster as dg
import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shop import MEMBERS, SHOP_FAILURES, Customers, OrderLines, Orders, Shop, shop_frames

from dagster_dataframely._engine.catalogue import rules
from dagster_dataframely._engine.settings import CheckSettings
from dagster_dataframely._sidecar.collection_checks import (
    collection_checks,
    collection_run,
    filter_rules,
)
from dagster_dataframely._sidecar.collection_evaluate import CollectionRun, collection_results

_KEY = st.integers(0, 6)
_MAYBE_KEY = st.one_of(st.none(), _KEY)


def _frame(rows: list[dict], schema: type) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=schema.create_empty().schema, orient="row")


_SHOPS = st.fixed_dictionaries(
    {
        "customers": st.lists(
            st.fixed_dictionaries({"customer_id": _KEY, "name": st.none()}), max_size=5
        ).map(lambda rows: _frame(rows, Customers)),
        "orders": st.lists(
            st.fixed_dictionaries(
                {
                    "order_id": _KEY,
                    "customer_id": _MAYBE_KEY,
                    "amount": st.one_of(st.none(), st.sampled_from([-1.0, 0.0, 2.5])),
                }
            ),
            max_size=8,
        ).map(lambda rows: _frame(rows, Orders)),
        "lines": st.lists(
            st.fixed_dictionaries(
                {
                    "order_id": _KEY,
                    "line_no": st.integers(0, 2),
                    "quantity": st.one_of(st.none(), st.integers(0, 2)),
                }
            ),
            max_size=12,
        ).map(lambda rows: _frame(rows, OrderLines)),
    }
)


def _run() -> tuple[CollectionRun, set[dg.AssetCheckKey]]:
    checks = collection_checks(Shop, members=MEMBERS)
    run = collection_run(Shop, members=MEMBERS, settings=CheckSettings(max_failure_samples=3))
    return run, set(checks.check_keys)


def _ours(frames: dict[str, pl.DataFrame]) -> dict[tuple[str, str], int]:
    run, keys = _run()
    lazy = {name: frame.lazy() for name, frame in frames.items()}
    by_key = {dg.AssetKey.from_user_string(key): name for name, key in MEMBERS.items()}
    return {
        (by_key[result.asset_key], result.check_name): result.metadata["dy_failed_count"].value
        for result in collection_results(run, lazy, keys)
        if not result.passed and result.asset_key is not None and result.check_name
    }


def _dataframely(frames: dict[str, pl.DataFrame]) -> dict[tuple[str, str], int]:
    names = {f.name: f.check_name for f in filter_rules(Shop)}
    for schema in Shop.member_schemas().values():
        names |= {rule.name: rule.check_name for rule in rules(schema)}
    failure = Shop.filter(frames, cast=False).failure
    return {
        (member, names[rule]): count
        for member, info in failure.items()
        for rule, count in info.counts().items()
    }


def test_the_shop_frames_fail_as_documented() -> None:
    assert _ours(shop_frames()) == SHOP_FAILURES == _dataframely(shop_frames())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frames=_SHOPS)
def test_counts_equal_collection_filter(frames: dict[str, pl.DataFrame]) -> None:
    assert _ours(frames) == _dataframely(frames)
