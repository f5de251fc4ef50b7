"""`make screenshots`: the docs' pictures of the real Dagster UI over the demo's instance.

Run after `make demo` (the Makefile target does both). Starts `dagster-webserver` on
127.0.0.1 over `DEMO_DIR/dagster_home`, waits until it answers, and has Debian's headless
chromium render each page to a PNG under docs/images/ (shrunk with pngquant when present).
The UI is a JavaScript app: `--virtual-time-budget` lets it fetch and render before the shot.

The report (`report.png`) is `dd.check_report`'s HTML of the demo's instance, opened from
a file as a CI artifact is.

The plotted `dy_failed_fraction` needs a click (the Plots toggle is page state, not in the
URL) and a week of check runs: `plotted_fraction` runs `dagster_dataframely_demo.plotted` into
an instance of its own, `DEMO_DIR/plotted`, and drives chromium over its DevTools protocol.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import dagster as dg
from dagster_dataframely_demo._webserver import webserver
from dagster_dataframely_demo.plotted import materialize_days
from websockets.sync.client import ClientConnection, connect

import dagster_dataframely as dd

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "docs" / "images"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]


#: A failing check of orders whose sample holds nulls.
NULLS_CHECK = "dy_rule__customer_email__nullability"
#: A failing check of an "error" rule of orders: its rows went to the quarantine (`dy_quarantine`).
QUARANTINED_CHECK = "dy_rule__amount__min"
#: A failing check of customers, whose failing rows are kept in DuckDB (`dy_failing_rows`).
KEPT_CHECK = "dy_rule__country__regex"


def pages(instance: dg.DagsterInstance) -> dict[str, str]:
    """File name -> page of the UI (a path under the webserver's root)."""
    storefront = next(
        run
        for run in instance.get_runs()
        if run.asset_selection and dg.AssetKey("orders") in run.asset_selection
    )
    return {
        "columns.png": "/assets/orders?view=overview",
        "checks.png": "/assets/customers?view=checks&checkDetail=dy_rule__country__regex",
        "samples.png": f"/assets/orders?view=checks&checkDetail={NULLS_CHECK}",
        # Reading the Checks tab: a rule check of the gated orders, its rows in the quarantine.
        "checks-tab.png": f"/assets/orders?view=checks&checkDetail={QUARANTINED_CHECK}",
        # The failing rows kept: the query for them, run as it is in the warehouse.
        "failing-rows.png": f"/assets/customers?view=checks&checkDetail={KEPT_CHECK}",
        "materialization.png": "/assets/orders?view=events",
        "quarantine.png": "/assets/orders_quarantine?view=overview",
        "lineage.png": "/assets/orders_quarantine?view=lineage&lineageScope=neighbors",
        "run.png": f"/runs/{storefront.run_id}",
    }


def main() -> int:
    demo = Path(os.environ.get("DEMO_DIR") or ROOT / ".demo")
    IMAGES.mkdir(parents=True, exist_ok=True)
    with webserver(demo) as url:
        _dismiss_welcome(url)
        instance = dg.DagsterInstance.from_config(str(demo / "dagster_home"))
        for name, page in pages(instance).items():
            _shoot(url + page, IMAGES / name)
            print(f"  {IMAGES / name} ({(IMAGES / name).stat().st_size // 1024} KB)")
    plotted_fraction(demo / "plotted", IMAGES / "plotted-fraction.png")
    print(f"  {IMAGES / 'plotted-fraction.png'}")
    report(demo / "dagster_home", IMAGES / "report.png")
    print(f"  {IMAGES / 'report.png'} ({(IMAGES / 'report.png').stat().st_size // 1024} KB)")
    return 0


def report(home: Path, target: Path) -> None:
    """The HTML report of the demo's instance (`dd.check_report`), as a file opens offline."""
    with tempfile.TemporaryDirectory() as folder:
        page = Path(folder) / "report.html"
        page.write_text(dd.check_report(instance=home), encoding="utf-8")
        _shoot(page.as_uri(), target)


#: The plot the picture shows: the fraction of payments whose e-mail has no `@`.
PLOTTED = "dy_failed_fraction/dy_rule__email__regex"
#: JavaScript: the box of the plot titled `label` (its cell of the plots grid), scrolled into
#: view, or null before it is drawn.
_ROW_OF = """(label) => {
  const title = [...document.querySelectorAll("h4, div, span")].find(e => e.innerText === label);
  if (!title || document.querySelectorAll("canvas").length === 0) return null;
  let cell = title;
  while (cell.parentElement && getComputedStyle(cell.parentElement).display !== "grid") {
    cell = cell.parentElement;
  }
  cell.scrollIntoView();
  const box = cell.getBoundingClientRect();
  return {x: box.x - 8, y: box.y, width: box.width + 8, height: box.height + 8};
}"""


def plotted_fraction(folder: Path, target: Path) -> None:
    """A week of daily `payments` runs with their checks (observing their fractions) in a
    fresh instance under `folder`, then the asset's Plots, cut to the plot `PLOTTED`."""
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "dagster_home").mkdir(parents=True)
    (folder / "dagster_home" / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    with dg.DagsterInstance.from_config(str(folder / "dagster_home")) as instance:
        materialize_days(instance, str(folder / "data"))
    with (
        webserver(folder, target=("-m", "dagster_dataframely_demo.plotted")) as url,
        _devtools() as page,
    ):
        _dismiss_welcome(url)
        page("Page.navigate", url=f"{url}/assets/payments?view=overview")
        _until(page, "[...document.querySelectorAll('button')].some(b => b.innerText === 'Plots')")
        _evaluate(
            page,
            "[...document.querySelectorAll('button')].find(b => b.innerText === 'Plots').click()",
        )
        _until(page, f"({_ROW_OF})({PLOTTED!r}) !== null")
        time.sleep(3)  # the charts animate in
        row = _evaluate(page, f"({_ROW_OF})({PLOTTED!r})")
        shot = page("Page.captureScreenshot", format="png", clip={**row, "scale": 2})
    target.write_bytes(base64.b64decode(shot["data"]))


@contextmanager
def _devtools() -> Iterator[Any]:
    """Headless chromium's page, as a function sending one DevTools command and returning
    its result."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    with tempfile.TemporaryDirectory() as profile:
        chromium = subprocess.Popen(
            [
                "chromium",
                *CHROMIUM_FLAGS,
                f"--user-data-dir={profile}",
                "--window-size=1400,1100",
                f"--remote-debugging-port={port}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            pages = _listed(port)
            page = next(p for p in pages if p["type"] == "page")
            with connect(page["webSocketDebuggerUrl"], max_size=None) as socket_:
                yield lambda method, **params: _command(socket_, method, params)
        finally:
            chromium.terminate()
            chromium.wait(timeout=60)


def _listed(port: int) -> list[dict[str, Any]]:
    for _ in range(120):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list") as answer:
                return list(json.load(answer))
        except OSError:
            time.sleep(0.5)
    raise RuntimeError("chromium's DevTools did not answer")


_sent = iter(range(1, 1_000_000))


def _command(socket_: ClientConnection, method: str, params: dict[str, Any]) -> Any:
    number = next(_sent)
    socket_.send(json.dumps({"id": number, "method": method, "params": params}))
    while True:
        message = json.loads(socket_.recv())
        if message.get("id") == number:
            if "error" in message:
                raise RuntimeError(f"{method}: {message['error']}")
            return message["result"]


def _evaluate(page: Any, expression: str) -> Any:
    found = page("Runtime.evaluate", expression=expression, returnByValue=True)
    return found["result"].get("value")


def _until(page: Any, expression: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not _evaluate(page, expression):
        if time.monotonic() > deadline:
            raise RuntimeError(f"the page never showed {expression}")
        time.sleep(0.5)


def _dismiss_welcome(url: str) -> None:
    """Mark the UI's first-visit "join the community" dialog as seen, as its Skip button does
    (a flag in the instance), so it does not cover the pictures."""
    request = urllib.request.Request(
        f"{url}/graphql",
        data=json.dumps({"query": "mutation { setNuxSeen }"}).encode(),
        headers={"Content-Type": "application/json"},
    )
    urllib.request.urlopen(request, timeout=60).close()


def _shoot(url: str, target: Path) -> None:
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [
                "chromium",
                *CHROMIUM_FLAGS,
                f"--user-data-dir={profile}",
                "--window-size=1400,1100",
                "--virtual-time-budget=30000",
                f"--screenshot={target}",
                url,
            ],
            check=True,
            capture_output=True,
            timeout=300,
        )
    if shutil.which("pngquant"):
        subprocess.run(
            ["pngquant", "--force", "--skip-if-larger", "--output", str(target), str(target)],
            check=False,
        )


if __name__ == "__main__":
    sys.exit(main())
