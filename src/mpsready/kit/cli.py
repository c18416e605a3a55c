"""``mpsready kit``: build a kit, or sign one off (arguments: :mod:`mpsready.commands.kit`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mpsready.errors import ExitCode, UsageError


def run(args: argparse.Namespace) -> int:
    if args.approve:
        return _approve(args)
    if not args.path or not args.entry or not args.out:
        raise UsageError("give PATH, --entry ENTRY and -o DIR (or --approve DIR --by NAME --rule TEXT)")
    from mpsready.kit.build import KitRequest, build

    built = build(KitRequest(Path(args.path), args.entry, Path(args.out), args.device, args.torch, args.tests,
                             args.steps, Path(args.record) if args.record else None,
                             Path(args.reference) if args.reference else None))
    sel = built.selection
    print(f"kit: {built.kit} ({len(sel.files)} project files; {len(sel.left_out)} left out, listed in "
          f"{built.kit / 'MANIFEST.md'})")
    print(f"archive: {built.archive}")
    print(f"manifest sha256: {built.manifest_sha256} (UNSIGNED: mpsready kit --approve {built.kit} --by NAME "
          "--rule TEXT)")
    print(f"on the {'Mac' if args.device == 'mps' else 'CUDA server'}: sh run-on-mac.sh (dry run anywhere: "
          "MPSREADY_KIT_DEVICE=cpu sh run-on-mac.sh)")
    return ExitCode.OK


def _approve(args: argparse.Namespace) -> int:
    from mpsready.kit import manifest
    from mpsready.kit.build import pack
    from mpsready.schema import utc_now

    if not args.by or not args.rule or not args.by.strip() or not args.rule.strip():
        raise UsageError("--approve needs --by NAME and --rule TEXT")
    if args.path or args.entry or args.out:
        raise UsageError("--approve signs an existing kit: give no PATH, --entry or -o with it")
    kit = Path(args.approve)
    if not kit.is_dir():
        raise UsageError(f"--approve: {kit} is not a kit folder")
    try:
        approval = manifest.approve(str(kit), args.by.strip(), args.rule.strip(), utc_now())
    except ValueError as exc:
        raise UsageError(f"--approve: {exc}") from None
    try:
        archive = pack(kit)
    except OSError as exc:  # the sign-off stands in the folder; the archive beside it could not be made again
        raise UsageError(f"--approve: signed in {kit}, but its archive {kit.name}.tar.gz could not be written: "
                         f"{exc.strerror or exc} (send the folder, or run --approve again where it can be)") from None
    print(manifest.signed_line(approval))
    print(f"archive: {archive}")
    print("note: the sign-off holds while every file matches the manifest", file=sys.stderr)
    return ExitCode.OK
