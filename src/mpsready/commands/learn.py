"""``mpsready learn`` arguments (the command itself: :mod:`mpsready.kit.learn`)."""

from __future__ import annotations

import argparse

from mpsready.commands import lazy_run


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "learn", help="keep what a real Mac observed, where the shipped data predicted otherwise, as local facts",
        description="Read a results archive of mpsready kit (run-on-mac.sh) and store each operator whose "
                    "observed behaviour on that Mac disagrees with the shipped prediction as a local fact "
                    "(in MPSREADY_DATA_DIR, default the user data folder). Later runs, traces and checks on this "
                    "machine use it, labelled 'observed on <machine>'.")
    p.add_argument("archive", metavar="ARCHIVE", nargs="?", help="results.tar.gz from run-on-mac.sh")
    p.add_argument("--list", action="store_true", help="list the local facts kept so far (ARCHIVE is ignored)")
    p.add_argument("--format", choices=("terminal", "json"), default="terminal")
    p.set_defaults(run=lazy_run("mpsready.learn.cli"))
