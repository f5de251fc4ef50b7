"""A pandas frame polars cannot convert: the error names the asset, the column and the fix.

pandas lets one `object` column hold a string on one row and an integer on the next; polars
(through pyarrow) needs one type per column. The conversion runs wherever a pandas frame is
validated, so each entry point is run for real on such a frame.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import pandas as pd
import pytest
from support import step_error

import dagster_dataframely as dd
from dagster_dataframely.errors import FrameConversionError


class Codes(dy.Schema):
    code = dy.String()
    qty = dy.Int64(min=0)


def mixed_codes() -> pd.DataFrame:
    """`code` holds strings and, on one row, an integer: pandas keeps it, polars refuses it."""
    return pd.DataFrame({"code": ["A-1", 7, "B-2"], "qty": [1, 2, 3]})


def _assert_names_the_culprit(cls_name: str, message: str, asset: str) -> None:
    assert cls_name == FrameConversionError.__name__
    assert f"asset {asset}" in message
    assert "column 'code'" in message
    assert "int, str" in message  # the types the column mixes
    assert ".astype(str)" in message  # what to do


def test_the_sidecar_names_the_stored_asset_and_the_mixed_column(tmp_path: Path) -> None:
    @dg.asset(key=["raw", "codes"])
    def codes() -> pd.DataFrame:
        return mixed_codes()

    checks = dd.schema_checks(Codes, asset="raw/codes")
    result = dg.materialize(
        [codes, checks],
        resources={"io_manager": dg.FilesystemIOManager(base_dir=str(tmp_path))},
        raise_on_error=False,
    )

    assert not result.success
    failure = result.failure_data_for_node(checks.node_def.name)
    assert failure is not None and failure.error is not None and failure.error.cause is not None
    cause = failure.error.cause
    _assert_names_the_culprit(cause.cls_name or "", cause.message, "raw/codes")


def test_a_hand_wired_asset_names_itself_and_the_mixed_column(tmp_path: Path) -> None:
    @dg.asset(
        key=["raw", "codes"],
        check_specs=dd.wiring.check_specs(Codes, asset="raw/codes"),
        output_required=False,
    )
    def codes() -> dd.wiring.AssetYield:
        yield from dd.wiring.validation_results(Codes, mixed_codes(), valid_key="raw/codes")

    result = dg.materialize(
        [codes],
        resources={"io_manager": dg.FilesystemIOManager(base_dir=str(tmp_path))},
        raise_on_error=False,
    )

    assert not result.success
    _assert_names_the_culprit(*step_error(result), "raw/codes")


@pytest.mark.parametrize("call", ["check_results", "validation_results"])
def test_the_wiring_functions_name_their_asset_key(call: str) -> None:
    keyword = {"check_results": "asset_key", "validation_results": "valid_key"}[call]
    function: Any = getattr(dd.wiring, call)

    with pytest.raises(FrameConversionError) as raised:
        list(function(Codes, mixed_codes(), **{keyword: ["shop", "codes"]}))

    _assert_names_the_culprit(type(raised.value).__name__, str(raised.value), "shop/codes")
    assert raised.value.column == "code"


def test_a_convertible_pandas_frame_is_still_validated() -> None:
    frame = pd.DataFrame({"code": ["A-1", "B-2"], "qty": [1, -2]})

    results = list(dd.wiring.check_results(Codes, frame, asset_key="codes"))

    failing = {r.check_name for r in results if not r.passed}
    assert failing == {"dy_rule__qty__min"}
