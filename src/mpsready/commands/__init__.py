"""Each subcommand's argument definitions, importable without any stage.

One module per subcommand (``scan``, ``rules``, ``env``, ...) defines ``register(subparsers)``: the options,
their help and defaults, and ``run`` set to :func:`lazy_run` of the stage's ``cli`` module. Building the
whole parser (``mpsready --help``) therefore imports argparse, these modules, :mod:`mpsready.errors` and
:mod:`mpsready.findings` only; the stage that runs is imported when it runs. A module here holds no stage
logic: constants the stage also uses (defaults, format names) live here and the stage imports them.
"""

from __future__ import annotations

import argparse
import importlib


class LazyRun:
    """``run(args) -> int`` of ``module``, imported on the first call (``module.run(args)``).

    Raises whatever importing ``module`` or its ``run`` raises (``ModuleNotFoundError`` for a stage not
    installed, caught as an internal error by :func:`mpsready.cli.main`)."""

    def __init__(self, module: str, attr: str = "run") -> None:
        self.module = module
        self.attr = attr

    def __call__(self, args: argparse.Namespace) -> int:
        fn = getattr(importlib.import_module(self.module), self.attr)
        return int(fn(args))

    def __repr__(self) -> str:
        return f"LazyRun({self.module!r}, {self.attr!r})"


def lazy_run(module: str, attr: str = "run") -> LazyRun:
    """The ``run`` default of a subparser: ``module.attr(args)``, importing ``module`` only when called."""
    return LazyRun(module, attr)
