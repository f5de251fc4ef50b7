"""`make screenshots`: the docs' pictures of the real Dagster UI over the demo's instance.

Run after `make demo` (the Makefile target does both). Starts `dagster-webserver` on
127.0.0.1 over `DEMO_DIR/dagster_home`, waits until it answers, and has Debian's headless
chromium render each page to a PNG under docs/images/ (shrunk with pngquant when present).
The UI is a JavaScript app: `--virtual-time-budget` lets it fetch and render before the shot.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import dagster as dg

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


def pages(instance: dg.DagsterInstance) -> dict[str, str]:
    """File name -> page of the UI (a path under the webserver's root)."""
    storefront = next(
        run
        for run in instance.get_runs()
        if run.asset_selection and dg.AssetKey("orders") in run.asset_selection
    )
    return {
        "columns.png": "/assets/orders?view=definition",
        "checks.png": "/assets/customers?view=checks&checkDetail=dy_rule__country__regex",
        "orders-checks.png": "/assets/orders?view=checks&checkDetail=dy_rule__customer_email__nullability",
        "quarantine.png": "/assets/orders?view=events",
        "run.png": f"/runs/{storefront.run_id}",
    }


def main() -> int:
    demo = Path(os.environ.get("DEMO_DIR") or ROOT / ".demo")
    home = demo / "dagster_home"
    env = {**os.environ, "DAGSTER_HOME": str(home), "DEMO_STORAGE": str(demo / "data")}
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    webserver = Path(sys.executable).with_name("dagster-webserver")
    log = (demo / "logs" / "screenshots-webserver.log").open("w")
    command = [str(webserver), "-m", "dagster_dataframely_demo.definitions"]
    server = subprocess.Popen(
        [*command, "-h", "127.0.0.1", "-p", str(port)], env=env, stdout=log, stderr=log
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait(url, server)
        IMAGES.mkdir(parents=True, exist_ok=True)
        for name, page in pages(dg.DagsterInstance.from_config(str(home))).items():
            _shoot(url + page, IMAGES / name)
            print(f"  {IMAGES / name} ({(IMAGES / name).stat().st_size // 1024} KB)")
    finally:
        server.terminate()
        server.wait(timeout=60)
        log.close()
    return 0


def _wait(url: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 600
    while True:
        try:
            urllib.request.urlopen(f"{url}/server_info", timeout=5)
            return
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("dagster-webserver did not start; see its log") from None
            time.sleep(1)


def _shoot(url: str, target: Path) -> None:
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [
                "chromium",
                *CHROMIUM_FLAGS,
                f"--user-data-dir={profile}",
                "--window-size=1400,900",
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
