"""A Spark Connect session (`pyspark.sql.connect`): a client that reaches a Spark server over
gRPC at an `sc://` URL, so the check process holds no JVM.

Its client retries a server that does not answer for over ten minutes by default (15 tries
with growing waits), which would hang a check on an unreachable cluster. The first query a
check sends (`probe`) retries less, so a server that is not there fails the check in seconds
with its URL; the queries after it keep the session's own retries, as a server that answered
may be busy.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

#: Retries of the probe: with gRPC's own reconnect waits, about ten seconds to give up.
PROBE_RETRIES = 4


def is_connect(session: Any) -> bool:
    """Whether `session` is a Spark Connect session (its queries go through a gRPC client),
    told by its class (a classic session's `client` raises; importing Connect's class would
    need its gRPC client installed)."""
    return any(kind.__module__.startswith("pyspark.sql.connect.") for kind in type(session).__mro__)


def url_of(session: Any) -> str:
    """The `sc://host:port` the session's client talks to (no token or other parameter)."""
    client = session.client
    endpoint = getattr(getattr(client, "_builder", None), "endpoint", None)
    return f"sc://{endpoint or client.host}"


def probe(session: Any) -> None:
    """Send `SELECT 1` with `PROBE_RETRIES` retries, the session's own put back after; a
    server that gives no answer raises `ConnectionError` naming its URL and the wait."""
    from pyspark.sql.connect.client.retries import DefaultPolicy

    client = session.client
    policies = client.get_retry_policies()
    client.set_retry_policies([DefaultPolicy(max_retries=PROBE_RETRIES)])
    started = time.monotonic()
    try:
        with warnings.catch_warnings():  # pyspark warns as it gives up; the error says it
            warnings.filterwarnings("ignore", message=r"\[RETRIES_EXCEEDED\]")
            session.sql("SELECT 1")
    except Exception as error:
        if getattr(error, "getSqlState", lambda: None)() is not None:
            raise  # the server answered: Spark's own error
        status = getattr(error, "getGrpcStatusCode", lambda: None)()
        said = f"gRPC status {status.name}" if status else type(error).__name__
        raise ConnectionError(
            f"the Spark Connect server at {url_of(session)} did not answer "
            f"({PROBE_RETRIES + 1} attempts over {time.monotonic() - started:.1f} s: {said})"
        ) from error
    finally:
        client.set_retry_policies(policies)
