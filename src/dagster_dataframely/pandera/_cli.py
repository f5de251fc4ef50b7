"""The console script's former home: installs made before it moved to `dagster_dataframely._cli`
still run `dagster_dataframely.pandera._cli:main`."""

from .._cli import main

__all__ = ["main"]
