"""What the Dagster UI shows, read from a real `dagster-webserver` over GraphQL: the Columns
tab and the checks of the demo code location."""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dagster_dataframely.data import OrdersSchema

_QUERY = """
{ assetNodes {
    assetKey { path }
    metadataEntries { label ... on TableSchemaMetadataEntry {
        schema { columns { name type constraints { nullable unique other } }
                 constraints { other } } } }
    assetChecksOrError { ... on AssetChecks { checks { name description blocking } } }
} }
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def webserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home = tmp_path_factory.mktemp("dagster_home")
    port = _free_port()
    log = (home / "webserver.log").open("w")
    env = {**os.environ, "DAGSTER_HOME": str(home), "DEMO_STORAGE": str(home / "data")}
    server = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("dagster-webserver")),
            *("-m", "dagster_dataframely_demo.definitions", "-h", "127.0.0.1", "-p", str(port)),
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{url}/server_info", timeout=2)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    server.kill()
                    raise RuntimeError((home / "webserver.log").read_text()[-3000:]) from None
                time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


def _asset_nodes(url: str) -> dict[str, Any]:
    request = urllib.request.Request(
        f"{url}/graphql",
        data=json.dumps({"query": _QUERY}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        nodes = json.load(response)["data"]["assetNodes"]
    return {"/".join(node["assetKey"]["path"]): node for node in nodes}


def _columns_tab(node: dict[str, Any]) -> dict[str, Any]:
    (entry,) = [e for e in node["metadataEntries"] if e["label"] == "dagster/column_schema"]
    return entry["schema"]


def test_gated_and_sidecar_assets_show_the_schema_in_the_columns_tab(webserver: str) -> None:
    nodes = _asset_nodes(webserver)
    for asset in ("orders", "legacy_orders"):
        schema = _columns_tab(nodes[asset])
        columns = {column["name"]: column for column in schema["columns"]}
        assert list(columns) == OrdersSchema.column_names()
        assert columns["amount"]["type"] == "Float64"
        assert columns["amount"]["constraints"]["nullable"] is True
        assert "amount >= 0" in columns["amount"]["constraints"]["other"]
        assert columns["line_item_id"]["constraints"]["unique"] is True
        assert "primary key (order_id, line) is unique" in schema["constraints"]["other"]
    assert not [e for e in nodes["raw_orders"]["metadataEntries"] if "column" in e["label"]]


def test_each_rule_is_a_check_with_its_description_and_blocking(webserver: str) -> None:
    nodes = _asset_nodes(webserver)
    gated = {c["name"]: c for c in nodes["orders"]["assetChecksOrError"]["checks"]}
    assert gated["dy_schema__columns"]["blocking"] is True
    assert gated["dy_rule__amount__min"]["description"] == "amount >= 0"
    assert gated["dy_rule__amount__min"]["blocking"] is False  # the asset quarantines
    sidecar = {c["name"]: c for c in nodes["legacy_orders"]["assetChecksOrError"]["checks"]}
    assert set(sidecar) == set(gated)
    assert sidecar["dy_rule__paid_orders_have_amount"]["description"].startswith("A paid")
