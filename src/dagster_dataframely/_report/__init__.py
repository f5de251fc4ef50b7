"""The report of the checks' history in a Dagster instance (`dagster-dataframely report`,
`dd.check_report`): read it (`history`, `selection`), shape it (`model`), write it (`html`,
`markdown`, or the model as JSON).

Imports `_checks` (the figures a check records, the instance's private history reader),
the engine's display helpers and `errors`; nothing above it.
"""

from .report import check_report

__all__ = ["check_report"]
