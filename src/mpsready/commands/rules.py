"""``mpsready rules`` arguments (the command itself: :mod:`mpsready.rules_cli`)."""

from __future__ import annotations

import argparse

from mpsready.commands import lazy_run


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("rules", help="list every rule with its code and explanation")
    p.add_argument("codes", nargs="*", help="codes or prefixes to show (default: all)")
    p.add_argument("--format", choices=("terminal", "json", "md"), default="terminal")
    p.set_defaults(run=lazy_run("mpsready.rules_cli"))
