"""``mpsready learn``: read a results archive of ``mpsready kit`` and keep each observed disagreement with the
shipped data as a local fact (arguments: :mod:`mpsready.commands.learn`).

An operator the Mac ran on MPS (dispatched in the trace on the device, no error, no fallback) that the shipped
tables call missing or unknown; an operator the Mac refused (PyTorch's NotImplementedError text) or ran on the
CPU through the fallback that the tables say has a kernel: each becomes a :class:`mpsready.ops.learned.Fact`,
sourced to the machine, its macOS and its PyTorch. Agreements are counted, not stored. Only results observed on
a Mac are learned from: a dry run on the CPU teaches nothing about MPS.
"""

from __future__ import annotations

import argparse
import json
import os

from mpsready.errors import ExitCode, UsageError
from mpsready.ops import learned


def _has_kernel(outcome: str) -> bool | None:
    return {"runs": True, "composite": True, "error": False, "fallback": False, "crash": False}.get(outcome)


def disagreements(mac, archive_name: str, now: str) -> tuple[list[learned.Fact], int]:
    """(facts to keep, agreements) for the operators ``mac`` observed, judged against the shipped tables only."""
    from mpsready.ops.judge import Judge
    from mpsready.report.evidence.mac import observed_ops

    env = mac.env
    try:
        with learned.disabled():
            judge = Judge(env.torch, env.macos, fallback=False)
    except ValueError as exc:
        raise UsageError(f"the Mac's PyTorch {env.torch} / macOS {env.macos} has no shipped table to compare "
                         f"with: {exc}") from None
    facts, agree = [], 0
    for op, seen in sorted(observed_ops(mac).items()):
        with learned.disabled():
            j = judge.op(op)
        predicted = _has_kernel(j.outcome)
        if predicted is not None and predicted == (seen.status == "runs"):
            agree += 1
            continue
        facts.append(learned.Fact(op, seen.status, env.torch, env.macos, mac.machine or "an unnamed Mac", seen.how,
                                  f"{j.outcome}" + (f" ({j.kind})" if j.kind else ""), archive_name, now))
    return facts, agree


def run(args: argparse.Namespace) -> int:
    from mpsready.report.evidence.mac import load
    from mpsready.schema import utc_now

    if args.list:
        facts = learned.load()
        if args.format == "json":
            print(json.dumps({"store": str(learned.store_path()), "facts": [learned.as_dict(f) for f in facts]},
                             indent=2))
        else:
            print(f"{len(facts)} local fact(s) in {learned.store_path()}")
            for f in facts:
                print(f"  {f.op}: {f.status} ({f.label}; shipped data: {f.predicted})")
        return ExitCode.OK
    if not args.archive:
        raise UsageError("give the results ARCHIVE (or --list)")
    mac = load(args.archive)
    if not mac.on_mac:
        why = "a dry run" if mac.dry_run else f"device {mac.device}, system {mac.env.system if mac.env else 'unknown'}"
        print(f"learn: nothing learned: {args.archive} was not observed on a Mac's MPS device ({why})")
        return ExitCode.OK
    if not (mac.env and mac.env.torch and mac.env.macos):
        raise UsageError(f"{args.archive} holds no env record with the Mac's PyTorch and macOS versions")
    facts, agree = disagreements(mac, os.path.basename(args.archive), utc_now())
    path, total = learned.save(facts) if facts else (learned.store_path(), len(learned.load()))
    if args.format == "json":
        print(json.dumps({"store": str(path), "learned": [learned.as_dict(f) for f in facts], "agreements": agree,
                          "total": total}, indent=2))
        return ExitCode.OK
    print(f"learn: {len(facts)} disagreement(s) with the shipped data kept, {agree} agreement(s) "
          f"(observed on {mac.where}); {total} fact(s) in {path}")
    for f in facts:
        print(f"  {f.op}: observed {f.status} ({f.how}); shipped data predicted {f.predicted}")
    return ExitCode.OK
