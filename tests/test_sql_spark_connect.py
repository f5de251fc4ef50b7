"""`SparkTableSource` over a Spark Connect session (`pyspark.sql.connect`): a real Connect
server (pyspark's own jar, in a local Spark) checked through a client, with Dataframely's
counts and `dy_engine: spark`, a missing table a read error, and an unreachable server a
connection error naming its URL within seconds.

Each test runs in a process of its own: pyspark refuses a Connect session beside the classic
one of tests/spark.py, and marks its process as Connect's from then on.
"""

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from spark import GROUP

pytestmark = GROUP

#: Runs `Everything`'s checks through a Connect client of a local Connect server, on a table
#: and on its parquet path, then a missing table's; prints what each found as JSON.
_CONNECTED = """
import json, socket, sys, tempfile
sys.path.insert(0, TESTS)
import polars as pl
from pyspark.sql import SparkSession
from pyspark.sql.connect.session import SparkSession as ConnectSession
import dagster_dataframely as dd
from spark import spark_view
from support import dataframely_rule_counts, failure_text, rule_outcomes
from test_catalogue_kinds import Everything
from test_sql_spark import EVERYTHING, _checks_run

free = socket.socket()
free.bind(("127.0.0.1", 0))
port = free.getsockname()[1]
free.close()
server = (
    SparkSession.builder.master("local[1]")
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "2")
    .config("spark.plugins", "org.apache.spark.sql.connect.SparkConnectPlugin")
    .config("spark.connect.grpc.binding.port", str(port))
    .getOrCreate()
)
server.sparkContext.setLogLevel("OFF")
session = ConnectSession.builder.remote(f"sc://127.0.0.1:{port}").getOrCreate()
spark_view(session, "payments", EVERYTHING)
_, result = _checks_run(Everything, dd.sources.SparkTableSource(), {"spark": session})
stored = pl.from_arrow(session.table("payments").toArrow())
path = tempfile.mkdtemp() + "/payments"
session.table("payments").write.parquet(path)
_, by_path = _checks_run(Everything, dd.sources.SparkTableSource(path=path), {"spark": session})
views = [table.name for table in session.catalog.listTables() if table.name.startswith("dy_")]
source = dd.sources.SparkTableSource(table="no_such_table")
_, missing = _checks_run(Everything, source, {"spark": session})
print(json.dumps({
    "session": type(session).__module__,
    "outcomes": rule_outcomes(result),
    "by_path": rule_outcomes(by_path),
    "views": views,
    "expected": dataframely_rule_counts(Everything, stored),
    "missing": failure_text(missing),
}))
"""


def test_checks_run_through_a_spark_connect_session_with_dataframelys_counts() -> None:
    from test_sql_spark import EVERYTHING_FALLBACKS

    tests = str(Path(__file__).parent)
    done = subprocess.run(
        [sys.executable, "-c", _CONNECTED.replace("TESTS", repr(tests))],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])

    assert found["session"] == "pyspark.sql.connect.session"
    outcomes = {name: tuple(outcome) for name, outcome in found["outcomes"].items()}
    assert {n: c for n, (c, _) in outcomes.items() if c} == {
        n: c for n, c in found["expected"].items() if c
    }
    assert {n for n, (c, _) in outcomes.items() if c} >= {"dy_rule__primary_key"}
    assert {n for n, (_, engine) in outcomes.items() if engine != "spark"} == (EVERYTHING_FALLBACKS)
    assert {name: tuple(outcome) for name, outcome in found["by_path"].items()} == outcomes
    assert found["views"] == []  # the path's temporary view is dropped with the check
    missing = found["missing"]
    assert "SourceReadError" in missing
    assert "SourceConnectionError" not in missing
    assert "asset payments" in missing
    assert "Spark table 'no_such_table' via resource 'spark'" in missing
    assert "[TABLE_OR_VIEW_NOT_FOUND] The table or view `no_such_table` cannot be found" in missing
    assert "Check the table's name" in missing


#: The checks of table `rows` through a Connect session of a server at PORT that is not
#: there; prints the failed step's error chain.
_UNREACHABLE = """
import os
import dagster as dg, dataframely as dy
import dagster_dataframely as dd
from pyspark.sql import SparkSession

class Rows(dy.Schema):
    id = dy.Int64()

session = SparkSession.builder.remote("sc://127.0.0.1:PORT").getOrCreate()
checks = dd.schema_checks(Rows, asset="rows", source=dd.sources.SparkTableSource(table="rows"))
result = dg.materialize(
    [dg.AssetSpec("rows"), checks], resources={"spark": session},
    selection=dg.AssetSelection.all_asset_checks(), raise_on_error=False,
)
(failure,) = result.get_step_failure_events()
print(failure.step_failure_data.error.to_string(), flush=True)
os._exit(0)  # at exit pyspark's client would release the session, retrying for ten minutes
"""


def test_an_unreachable_connect_server_fails_the_check_in_seconds_naming_its_url() -> None:
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()

    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", _UNREACHABLE.replace("PORT", str(port))],
        env=os.environ,
        capture_output=True,
        text=True,
        timeout=120,
    )
    took = time.monotonic() - started

    failure = done.stdout
    assert "SourceConnectionError" in failure, failure[-2000:] + done.stderr[-2000:]
    assert "Could not connect to the database of asset rows" in failure
    assert "Spark table 'rows' via resource 'spark'" in failure
    assert f"the Spark Connect server at sc://127.0.0.1:{port} did not answer" in failure
    assert "a Spark Connect server (sc://...) must be running" in failure
    assert "gRPC status UNAVAILABLE" in failure
    assert took < 60  # the client's own retries would wait over ten minutes
