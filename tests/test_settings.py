"""Settings resolve argument > environment variable > default, and name the bad tier."""

from __future__ import annotations

import dagster as dg
import polars as pl
import pytest

import dagster_dataframely as dd
from dagster_dataframely._engine.settings import CheckSettings, env_var, resolve
from dagster_dataframely.data import OrdersSchema
from dagster_dataframely.errors import InvalidSettingError


def test_argument_beats_environment_beats_default(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve("check_granularity") == "rule"
    monkeypatch.setenv("DAGSTER_DATAFRAMELY_CHECK_GRANULARITY", "column")
    assert resolve("check_granularity") == "column"
    assert resolve("check_granularity", "schema") == "schema"


def test_environment_values_are_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(env_var("quarantine"), "TRUE")
    monkeypatch.setenv(env_var("max_failure_samples"), "12")
    assert resolve("quarantine") is True
    assert resolve("max_failure_samples") == 12
    settings = CheckSettings.resolve()
    assert settings.max_failure_samples == 12


def test_a_bad_argument_names_the_argument() -> None:
    with pytest.raises(InvalidSettingError) as raised:
        resolve("check_granularity", "columns")
    message = str(raised.value)
    assert "argument check_granularity='columns'" in message
    assert "'rule', 'column', 'schema'" in message


def test_a_bad_environment_variable_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DAGSTER_DATAFRAMELY_ROW_SAMPLE", "-3")
    with pytest.raises(InvalidSettingError, match="DAGSTER_DATAFRAMELY_ROW_SAMPLE='-3'"):
        resolve("row_sample")
    monkeypatch.setenv("DAGSTER_DATAFRAMELY_STATISTICS", "maybe")
    with pytest.raises(InvalidSettingError, match="expected true or false"):
        resolve("statistics")


@pytest.mark.parametrize("value", [True, 1.5, "ten"])
def test_counts_refuse_what_is_not_a_whole_number(value: object) -> None:
    with pytest.raises(InvalidSettingError):
        resolve("max_failure_samples", value)


#: Every boolean setting; each takes the same values, as an argument and from its variable.
FLAGS = ["quarantine", "statistics"]
TRUE = [True, 1, "1", "true", "TRUE", "yes", "on", " Yes "]
FALSE = [False, 0, "0", "false", "no", "OFF"]


@pytest.mark.parametrize("name", FLAGS)
def test_every_boolean_setting_takes_the_same_values(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for value in TRUE:
        assert resolve(name, value) is True, value
    for value in FALSE:
        assert resolve(name, value) is False, value
    for text in ("1", "yes", "0", "off"):
        monkeypatch.setenv(env_var(name), text)
        assert resolve(name) is (text in ("1", "yes"))


@pytest.mark.parametrize("name", FLAGS)
@pytest.mark.parametrize("value", [2, -1, 1.0, "", "maybe", "y"])
def test_every_boolean_setting_refuses_the_same_values(name: str, value: object) -> None:
    with pytest.raises(InvalidSettingError, match=rf"argument {name}=.*expected true or false"):
        resolve(name, value)


def test_dd_asset_takes_quarantine_0_and_refuses_a_filter_that_contradicts_it() -> None:
    @dd.asset(OrdersSchema, quarantine=0)
    def orders() -> pl.DataFrame:
        return pl.DataFrame()

    assert isinstance(orders, dg.AssetsDefinition) and len(orders.keys) == 1
    with pytest.raises(InvalidSettingError, match="cannot differ"):
        dd.asset(OrdersSchema, quarantine="no", filter=True)
