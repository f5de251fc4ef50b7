"""`dy.CollectionMember(propagate_row_failures=True)`: a member's failing rows remove their
common primary key from every member, and the checks report those rows as Dataframely does.

`Collection.filter` records them as `<member>|failure_propagation` in each member's failure
info; here each is a `dy_filter__<member>__failure_propagation` check on every member it can
remove rows from, with the same counts, in real runs as in a property test.
"""

# No `from __future__ import annotations`: Dataframely reads the member annotations.
from pathlib import Path
from typing import Annotated

import dagster as dg
import dataframely as dy
import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import failed, materialized

import dagster_dataframely as dd
from dagster_dataframely._engine.settings import CheckSettings
from dagster_dataframely._sidecar.collection_checks import collection_run
from dagster_dataframely._sidecar.collection_evaluate import collection_results
from dagster_dataframely.io import ParquetIOManager

ERROR, WARN = dg.AssetCheckSeverity.ERROR, dg.AssetCheckSeverity.WARN


class Orders(dy.Schema):
    order_id = dy.Int64(primary_key=True)
    amount = dy.Float64(nullable=True, min=0)


class Lines(dy.Schema):
    order_id = dy.Int64(primary_key=True)
    line_no = dy.Int64(primary_key=True)
    quantity = dy.Int64(nullable=True, min=1)


class Notes(dy.Schema):
    order_id = dy.Int64(primary_key=True)
    text = dy.String(nullable=True)


class Propagating(dy.Collection):
    orders: Annotated[dy.LazyFrame[Orders], dy.CollectionMember(propagate_row_failures=True)]
    lines: Annotated[dy.LazyFrame[Lines], dy.CollectionMember(propagate_row_failures=True)]
    notes: Annotated[
        dy.LazyFrame[Notes],
        dy.CollectionMember(ignored_in_filters=True, propagate_row_failures=True),
    ]

    @dy.filter()
    def line_has_order(self) -> pl.LazyFrame:
        """Every line belongs to an order."""
        return self.lines.join(self.orders, on="order_id", how="semi")


MEMBERS = {"orders": "orders", "lines": "order_lines", "notes": "notes"}


def _frames() -> dict[str, pl.DataFrame]:
    return {
        # order 2 fails amount|min: its lines go too; order 5 fails the primary key
        "orders": pl.DataFrame(
            {"order_id": [1, 2, 3, 4, 5, 5], "amount": [1.0, -1.0, 2.0, 3.0, 1.0, 1.0]}
        ),
        # line (3, 1) fails quantity|min: line (3, 2) and order 3 go too
        "lines": pl.DataFrame(
            {
                "order_id": [1, 2, 3, 3, 4, 5],
                "line_no": [1, 1, 1, 2, 1, 1],
                "quantity": [1, 1, 0, 1, 1, 1],
            }
        ),
        # ignored in filters: its failures propagate nowhere
        "notes": pl.DataFrame({"order_id": [4, 4], "text": ["a", "b"]}),
    }


#: (member, check name) -> rows removed beyond the members' own rules, in `_frames()`.
EXPECTED = {
    ("orders", "dy_filter__lines__failure_propagation"): 1,  # order 3
    ("lines", "dy_filter__orders__failure_propagation"): 2,  # lines of orders 2 and 5
    ("lines", "dy_filter__lines__failure_propagation"): 1,  # line (3, 2), beside (3, 1)
    ("lines", "dy_filter__line_has_order"): 2,  # lines of orders 2 and 5
}


def _dataframely(frames: dict[str, pl.DataFrame]) -> dict[tuple[str, str], int]:
    """(member, check name) -> the rows `Propagating.filter` removes for each rule beyond the
    members' own. Rows, not `counts()`: when two failing rows of a propagating member share
    a key, Dataframely 3.1 repeats each removed row in its failure info once per valid row of
    that key (a member with one order counts it twice); a removed row is one row, and the
    member's valid rows are distinct by their primary key."""
    failure = Propagating.filter(frames, cast=False).failure
    own = {rule.name for s in Propagating.member_schemas().values() for rule in dd.wiring.rules(s)}
    removed: dict[tuple[str, str], int] = {}
    for member, info in failure.items():
        columns = Propagating.member_schemas()[member].column_names()
        for rule in info.counts():
            if rule not in own:
                rows = info._lf.filter(~pl.col(rule).fill_null(True)).select(columns).unique()
                removed[member, "dy_filter__" + rule.replace("|", "__")] = rows.collect().height
    return removed


def _ours(result: dg.ExecuteInProcessResult) -> dict[tuple[str, str], int]:
    members = {asset: member for member, asset in MEMBERS.items()}
    return {
        (members[e.asset_key.to_user_string()], e.check_name): e.metadata["dy_failed_count"].value
        for e in result.get_asset_check_evaluations()
        if not e.passed and e.check_name.startswith("dy_filter__")
    }


def _assets(frames: dict[str, pl.DataFrame]) -> list[dg.AssetsDefinition]:
    def member(name: str) -> dg.AssetsDefinition:
        @dg.asset(name=MEMBERS[name])
        def stored() -> pl.DataFrame:
            return frames[name]

        return stored

    return [member(name) for name in MEMBERS]


def _materialize(
    frames: dict[str, pl.DataFrame], tmp_path: Path, **kwargs: object
) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [*_assets(frames), dd.collection_checks(Propagating, members=MEMBERS, **kwargs)],
        resources={"io_manager": ParquetIOManager(base_dir=str(tmp_path))},
        raise_on_error=False,
    )


def test_propagated_failures_are_one_check_per_member_with_dataframelys_counts(
    tmp_path: Path,
) -> None:
    result = _materialize(_frames(), tmp_path)
    assert _ours(result) == _dataframely(_frames()) == EXPECTED
    assert failed(result)["dy_filter__lines__failure_propagation"] == (1, ERROR)


def test_a_propagation_check_names_its_member_and_can_be_made_warn(tmp_path: Path) -> None:
    checks = dd.collection_checks(Propagating, members=MEMBERS, warn="lines|failure_propagation")
    specs = {(k.asset_key.to_user_string(), k.name) for k in checks.check_keys}
    # Only members in filters get the checks; the ignored `notes` propagates nothing.
    assert {name for _, name in specs if "failure_propagation" in name} == {
        "dy_filter__orders__failure_propagation",
        "dy_filter__lines__failure_propagation",
    }
    assert not any(asset == "notes" and "dy_filter" in name for asset, name in specs)
    result = _materialize(_frames(), tmp_path, warn="lines|failure_propagation")
    assert failed(result)["dy_filter__lines__failure_propagation"] == (1, WARN)
    assert "order_lines" in materialized(result)


_KEY = st.integers(0, 4)
_FRAMES = st.fixed_dictionaries(
    {
        "orders": st.lists(st.tuples(_KEY, st.sampled_from([None, -1.0, 1.0])), max_size=6).map(
            lambda rows: pl.DataFrame(rows, schema=Orders.create_empty().schema, orient="row")
        ),
        "lines": st.lists(
            st.tuples(_KEY, st.integers(0, 2), st.sampled_from([None, 0, 1])), max_size=8
        ).map(lambda rows: pl.DataFrame(rows, schema=Lines.create_empty().schema, orient="row")),
        "notes": st.lists(st.tuples(_KEY, st.none()), max_size=3).map(
            lambda rows: pl.DataFrame(rows, schema=Notes.create_empty().schema, orient="row")
        ),
    }
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frames=_FRAMES)
def test_propagation_counts_equal_collection_filter(frames: dict[str, pl.DataFrame]) -> None:
    keys = set(dd.collection_checks(Propagating, members=MEMBERS).check_keys)
    run = collection_run(Propagating, members=MEMBERS, settings=CheckSettings())
    members = {dg.AssetKey(asset): member for member, asset in MEMBERS.items()}
    ours = {
        (members[r.asset_key], r.check_name): r.metadata["dy_failed_count"].value
        for r in collection_results(run, {n: f.lazy() for n, f in frames.items()}, keys)
        if not r.passed and r.asset_key is not None and r.check_name.startswith("dy_filter__")
    }
    assert ours == _dataframely(frames)


class Größe(dy.Collection):
    """Member and filter names Dagster cannot carry as they are."""

    maße: Annotated[dy.LazyFrame[Orders], dy.CollectionMember(propagate_row_failures=True)]
    lines: dy.LazyFrame[Lines]

    @dy.filter()
    def prüfung(self) -> pl.LazyFrame:
        return self.maße


def test_check_names_of_non_ascii_members_and_filters_are_spelled_in_ascii() -> None:
    checks = dd.collection_checks(Größe, members={"maße": "masse", "lines": "lines"})
    names = {key.name for key in checks.check_keys if key.name.startswith("dy_filter__")}
    assert names == {"dy_filter__masse__failure_propagation", "dy_filter__prufung"}
