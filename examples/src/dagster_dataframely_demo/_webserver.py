"""The Dagster UI over the demo's instance, on 127.0.0.1 only: for the screenshots script and
the webserver test (`make ui` runs `dagster dev` itself)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def webserver(folder: Path, *, target: Sequence[str] = (), timeout: float = 600) -> Iterator[str]:
    """`dagster-webserver` over `folder`'s instance and tables (a `DEMO_DIR`); yields its URL
    once it answers, stops it afterwards. Its log is `folder/logs/webserver.log`. `target`:
    the code location's arguments (`-f shop.py`), by default the demo's definitions."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    env = {
        **os.environ,
        "DAGSTER_HOME": str(folder / "dagster_home"),
        "DEMO_STORAGE": str(folder / "data"),
    }
    webserver = Path(sys.executable).with_name("dagster-webserver")
    command = [str(webserver), *(target or ("-m", f"{__package__}.definitions"))]
    (folder / "logs").mkdir(parents=True, exist_ok=True)
    log_path = folder / "logs" / "webserver.log"
    url = f"http://127.0.0.1:{port}"
    with log_path.open("w") as log:
        server = subprocess.Popen(
            [*command, "-h", "127.0.0.1", "-p", str(port)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    urllib.request.urlopen(f"{url}/server_info", timeout=5)
                    break
                except OSError:
                    if server.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(
                            f"dagster-webserver did not start:\n{log_path.read_text()[-3000:]}"
                        ) from None
                    time.sleep(1)
            yield url
        finally:
            server.terminate()
            server.wait(timeout=60)
