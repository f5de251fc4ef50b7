"""Benchmark: our pushdown against Soda Core 4 and Great Expectations 1.x on the same table.

    .venv/bin/python benchmarks/compare/run.py [--duckdb-rows 5_000_000]
        [--postgres-rows 2_000_000] [--repeat 3] [--primary-key no yes]
        [--databases duckdb postgres] [--tools floor ours soda gx base]
        [--baseline ../main/src]

(`make bench-compare`.) The other tools are never a dependency of the package or its tests:
they live in an environment of their own, `.bench-venv` (git-ignored), built on first use
from `benchmarks/compare/requirements.txt` with the project's uv (or pip).

The table and rules are `pushdown_floor.py`'s (5 columns, 9 rules, about 1% of rows failing
each; with `--primary-key yes` a 10th, `id` unique), in a DuckDB file and a throwaway
PostgreSQL server. Each contender runs in a fresh process, round-robin, medians of three;
`cost s` is the client's CPU plus the server's (DuckDB runs in the client), with its ratio to
the floor (the hand-written aggregate). Soda's contract and GX's suite state the same rules;
GX 1.x's SQL datasource does not run on DuckDB here, so GX is measured on PostgreSQL only.
With `--baseline SRC`, `base` is ours measured on another tree's package (its `src`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE.parent))

from _measure import (  # noqa: E402
    COST_HEADER,
    baseline_env,
    child_figures,
    closing,
    cost_row,
    dispatch,
    interleaved,
    measured,
    opening,
    postmaster,
    server_cpu,
)
from pushdown_floor import TABLE, add_table_arguments, over_tables  # noqa: E402

VENV = ROOT / ".bench-venv"
REQUIREMENTS = HERE / "requirements.txt"
TOOLS = ("floor", "ours", "soda", "gx", "base")
#: Ours and the floor run in the project's environment, the others in `.bench-venv`.
FOREIGN = {"soda", "gx"}


def bench_python() -> Path:
    """`.bench-venv`'s interpreter, the environment built or updated where the requirements
    changed since it was last installed."""
    python = VENV / "bin" / "python"
    stamp = VENV / ".requirements-sha256"
    wanted = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()
    if python.exists() and stamp.exists() and stamp.read_text() == wanted:
        return python
    if not python.exists():
        subprocess.run(["python3", "-m", "venv", str(VENV)], check=True)
    uv = ROOT / ".uv" / "bin" / "uv"
    install = (
        [str(uv), "pip", "install", "--python", str(python)]
        if uv.exists()
        else [str(python), "-m", "pip", "install"]
    )
    subprocess.run([*install, "-r", str(REQUIREMENTS)], check=True)
    stamp.write_text(wanted)
    return python


def soda_contract(database: str, key: bool, regex: str) -> str:
    """The 9 rules (10 with the key) as a Soda contract for `bench/<schema>/orders`."""
    schema = "main" if database == "duckdb" else "public"
    isinf = "isinf(amount)" if database == "duckdb" else "amount IN ('Infinity', '-Infinity')"
    isnan = "isnan(amount)" if database == "duckdb" else "amount = 'NaN'::double precision"
    duplicate = "\n      - duplicate:" if key else ""
    pattern = regex.replace("'", "''")
    return f"""dataset: bench/{schema}/{TABLE}
columns:
  - name: id
    checks:
      - missing:{duplicate}
  - name: email
    valid_format:
      regex: '{pattern}'
      name: email
    checks:
      - invalid:
  - name: country
    checks:
      - invalid:
          qualifier: min_length
          valid_min_length: 2
      - invalid:
          qualifier: max_length
          valid_max_length: 2
  - name: amount
    checks:
      - invalid:
          valid_min: 0
      - failed_rows:
          qualifier: inf
          expression: "{isinf}"
      - failed_rows:
          qualifier: nan
          expression: "{isnan}"
  - name: quantity
    checks:
      - invalid:
          qualifier: min
          valid_min: 1
      - invalid:
          qualifier: max
          valid_max: 6
"""


def soda_source(database: str, where: str) -> str:
    if database == "duckdb":
        return f"type: duckdb\nname: bench\nconnection:\n  database: {where}\n  read_only: true\n"
    fields = dict(part.split("=", 1) for part in where.split())
    return (
        "type: postgres\nname: bench\nconnection:\n"
        f"  host: {fields['host']}\n  port: {fields['port']}\n  user: {fields['user']}\n"
        f"  database: {fields['dbname']}\n  password: unused\n  sslmode: disable\n"
    )


def run_soda(database: str, where: str, key: bool, regex: str) -> int:
    """Soda's contract verified on the table; the failing rows it counts."""
    from soda_core.contracts.api.verify_api import verify_contract_locally

    with tempfile.TemporaryDirectory(prefix="dd-bench-soda-") as directory:
        source, contract = Path(directory) / "source.yml", Path(directory) / "contract.yml"
        source.write_text(soda_source(database, where))
        contract.write_text(soda_contract(database, key, regex))
        result = verify_contract_locally(
            data_source_file_path=str(source), contract_file_path=str(contract)
        )
    counted = 0
    for verified in result.contract_verification_results:
        for check in verified.check_results:
            values = check.diagnostic_metric_values or {}
            counted += int(next((values[k] for k in _SODA_COUNTS if k in values), 0))
    return counted


#: The count each kind of Soda check reports, first match wins (an invalid or duplicate
#: check reports its column's missing values too).
_SODA_COUNTS = ("invalid_count", "duplicate_count", "failed_rows_count", "missing_count")


def run_gx(database: str, where: str, key: bool, regex: str) -> int:
    """GX's suite of the same rules validated on the table; the failing rows it counts."""
    import great_expectations as gx
    import great_expectations.expectations as gxe

    fields = dict(part.split("=", 1) for part in where.split())
    url = (
        f"postgresql+psycopg2://{fields['user']}@{fields['host']}:{fields['port']}/"
        f"{fields['dbname']}"
    )
    context = gx.get_context(mode="ephemeral")
    source = context.data_sources.add_postgres(name="bench", connection_string=url)
    batch = source.add_table_asset(name=TABLE, table_name=TABLE).add_batch_definition_whole_table(
        "all"
    )
    expectations: list[Any] = [
        gxe.ExpectColumnValuesToNotBeNull(column="id"),
        gxe.ExpectColumnValuesToMatchRegex(column="email", regex=regex),
        gxe.ExpectColumnValueLengthsToBeBetween(column="country", min_value=2),
        gxe.ExpectColumnValueLengthsToBeBetween(column="country", max_value=2),
        gxe.ExpectColumnValuesToBeBetween(column="amount", min_value=0),
        gxe.UnexpectedRowsExpectation(
            unexpected_rows_query="SELECT * FROM {batch} WHERE amount IN ('Infinity', '-Infinity')"
        ),
        gxe.UnexpectedRowsExpectation(
            unexpected_rows_query="SELECT * FROM {batch} WHERE amount = 'NaN'::double precision"
        ),
        gxe.ExpectColumnValuesToBeBetween(column="quantity", min_value=1),
        gxe.ExpectColumnValuesToBeBetween(column="quantity", max_value=6),
    ]
    if key:
        expectations.append(gxe.ExpectColumnValuesToBeUnique(column="id"))
    suite = context.suites.add(gx.ExpectationSuite(name=TABLE, expectations=expectations))
    validation = context.validation_definitions.add(
        gx.ValidationDefinition(name=TABLE, data=batch, suite=suite)
    )
    result = validation.run(result_format="BASIC")
    errors = [r.exception_info for r in result.results if r.exception_info.get("raised_exception")]
    if errors:
        raise RuntimeError(f"GX raised: {str(errors[0])[-600:]}")
    return sum(
        int(r.result.get("unexpected_count") or r.result.get("observed_value") or 0)
        for r in result.results
    )


def measure(tool: str, database: str, where: str, key: str, regex: str) -> dict[str, Any]:
    """One contender's figures in this (fresh) process, after its imports."""
    import psycopg  # noqa: F401  (both environments have it)

    run = {"soda": run_soda, "gx": run_gx}[tool]
    if tool == "soda":
        import soda_core.contracts.api.verify_api  # noqa: F401
    else:
        import great_expectations  # noqa: F401
    server = _postmaster(where) if database == "postgres" else None
    before = server_cpu(server) if server else 0.0
    with measured() as figures:
        failed = run(database, where, key == "yes", regex)
    # The tool closed its connections: wait for the postmaster to reap their backends, whose
    # CPU then shows in its own (cutime, cstime).
    time.sleep(0.5)
    spent = server_cpu(server) - before if server else 0.0
    return {**figures, "server_cpu_seconds": spent, "failed": failed, "engines": {}}


def _postmaster(conninfo: str) -> int:
    import psycopg

    with psycopg.connect(conninfo) as connection:  # its backend's parent, while it lives
        return postmaster(connection)


def main(args: argparse.Namespace) -> None:
    python = bench_python() if FOREIGN & set(args.tools) else None
    floor_script = str(HERE.parent / "pushdown_floor.py")
    opening(f"{'database':8} {'rows':>6} {'key':>3} {'tool':6} | {COST_HEADER}  failing rows")

    def measure_all(database: str, where: str, rows: int) -> None:
        tools = [
            t
            for t in args.tools
            if not (t == "gx" and database == "duckdb") and (t != "base" or args.baseline)
        ]
        for key in args.primary_key:

            def run(tool: str, key: str = key) -> dict[str, Any]:
                arguments = (database, where, key, args.regex)
                if tool in FOREIGN:
                    found = _foreign(python, tool, arguments)
                else:
                    method = "floor" if tool == "floor" else "pushdown"
                    env = baseline_env(args.baseline) if tool == "base" else None
                    found = child_figures(floor_script, method, *arguments, label=tool, env=env)
                found.pop("engines")
                return found

            medians = interleaved(tools, args.repeat, run)
            for tool, m in medians.items():
                label = f"{database:8} {rows / 1e6:>5.1f}M {key:>3} {tool:6}"
                print(f"{cost_row(label, m, medians.get('floor')):<8} {int(m['failed'])}")

    over_tables(args, measure_all)
    closing(
        args.repeat,
        "cost s = cpu s (the client) + srv s (PostgreSQL's processes). With the key, the "
        "failing rows differ: dataframely counts every row of a repeated key, Soda and GX "
        "their own measures of duplicates.",
    )


def _foreign(python: Path | None, tool: str, arguments: tuple[str, ...]) -> dict[str, Any]:
    """`tool`'s figures measured by this script in `.bench-venv`'s interpreter."""
    assert python is not None
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    environment["PYTHONWARNINGS"] = "ignore"
    environment["GX_ANALYTICS_ENABLED"] = "False"
    environment["SODA_TELEMETRY_DISABLED"] = "true"
    run = subprocess.run(
        [str(python), __file__, "--measure", tool, *arguments],
        capture_output=True,
        text=True,
        env=environment,
    )
    if run.returncode:
        sys.exit(f"{tool} failed:\n{run.stderr[-4000:]}")

    return json.loads(run.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    add_table_arguments(parser, duckdb=5_000_000, postgres=2_000_000)
    parser.add_argument("--tools", nargs="+", choices=TOOLS, default=list(TOOLS))
    parser.add_argument("--baseline", metavar="SRC", help="a tree's src to measure as base")
    dispatch(parser, measure, main, ("TOOL", "DATABASE", "WHERE", "KEY", "REGEX"))
    sys.stdout.flush()
    os._exit(0)
