"""``mpsready scan`` arguments (the command itself: :mod:`mpsready.scan.cli`)."""

from __future__ import annotations

import argparse

from mpsready.commands import lazy_run

# The values of mpsready.findings.Severity, lowest first (a literal here so that building the parser imports
# no dataclasses; tests/foundation/test_startup.py checks it against the enum).
SEVERITIES = ("info", "degrades", "blocker")
# The scan's output formats, in the order --help lists them (renderers: mpsready.scan.formats.FORMATS).
FORMAT_NAMES = ("terminal", "json", "sarif", "md", "github", "concise", "gitlab")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("scan", help="static audit: what ties a project to CUDA (never runs it)",
                       description="Read a project's files (never import or run them) and report everything that ties "
                       "it to CUDA or would break or degrade on a Mac (MPS), with a static outlook.")
    p.add_argument("paths", nargs="+", metavar="PATH", help="project directory (or a single file); several "
                   "paths are scanned one by one and the exit code is the worst")
    p.add_argument("--format", "--output-format", dest="format", choices=FORMAT_NAMES, default="terminal",
                   help="github: workflow-command annotations for GitHub Actions (::error file=...,line=...::) and a "
                        "job summary; gitlab: a code quality report; concise: one line per finding")
    p.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE instead of stdout")
    p.add_argument("--fail-on", choices=list(SEVERITIES), default=None,
                   help="exit 1 when a finding is at or above this severity (default: blocker)")
    p.add_argument("--exit-zero", action="store_true",
                   help="exit 0 even when findings are at or above --fail-on (usage and internal errors still "
                        "exit 2 and 3)")
    p.add_argument("--select", action="append", metavar="CODES", help="only these codes or prefixes (comma-separated)")
    p.add_argument("--ignore", action="append", metavar="CODES", help="drop these codes or prefixes (comma-separated)")
    p.add_argument("--exclude", action="append", metavar="GLOB", help="skip paths matching this glob (repeatable)")
    p.add_argument("--max-file-size", type=int, metavar="BYTES", help="skip larger files with INP103 (default 5000000)")
    p.add_argument("--cache-dir", metavar="DIR", help="content-hash cache directory (default ~/.cache/mpsready)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    p.add_argument("--jobs", "-j", type=int, default=None, help="processes for Python analysis (default: CPU count)")
    p.add_argument("--no-config", action="store_true", help="ignore [tool.mpsready] in the project's pyproject.toml")
    p.add_argument("--no-gitignore", action="store_true", help="also scan what the project's .gitignore files ignore")
    p.add_argument("--ignore-scopes", action="append", metavar="SCOPES",
                   help="do not report findings in these scopes (comma-separated: tests, docs, examples, distributed, "
                        "vendored); the outlook still counts them")
    p.add_argument("--statistics", action="store_true",
                   help="print the number of findings per rule (with its fix once) instead of each finding")
    gate = p.add_mutually_exclusive_group()
    gate.add_argument("--baseline", metavar="FILE",
                      help="report and fail only on findings that FILE (written by --write-baseline) does not hold")
    gate.add_argument("--write-baseline", metavar="FILE",
                      help="record every current finding in FILE as the baseline, then exit 0")
    gate.add_argument("--add-noqa", action="store_true",
                      help="append '# mpsready: ignore[CODE]' to every line that has a finding, then exit 0")
    p.set_defaults(run=lazy_run("mpsready.scan.cli"))
