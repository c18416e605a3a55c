"""``mpsready replay A B [--layer NAME] [--step N] [--entry ENTRY] [--device D]``: one layer re-run alone.

Exit codes: 0 the divergence accumulated upstream, or there is none; 1 the layer alone reproduces it (an op
difference, NUM303); 2 usage or input error (no saved inputs in A: the message gives the
``record --save-inputs`` command).
"""

from __future__ import annotations

import argparse
import json
import sys

from mpsready.errors import ExitCode


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("replay", help="re-run the first diverging layer alone from recorded inputs: op or accumulated",
                       description="Re-run one layer of record A alone from its saved inputs (record --save-inputs "
                                   "LAYER), on this machine's devices and a float64 CPU reference, and say whether "
                                   "the layer itself makes the divergence between A and B (an op) or its inputs "
                                   "brought it (accumulated).")
    p.add_argument("a", metavar="A", help="run record with the layer's saved inputs (e.g. the CUDA record)")
    p.add_argument("b", metavar="B", help="the run record it diverges from (e.g. the MPS record)")
    p.add_argument("--layer", metavar="NAME", default=None,
                   help="module path to replay (default: the first diverging layer of compare A B)")
    p.add_argument("--step", type=int, default=None, help="recorded step (default: that of the first divergence, or 0)")
    p.add_argument("--entry", metavar="ENTRY", default=None, help="ENTRY that builds the model (default: record A's)")
    p.add_argument("--device", action="append", default=None, metavar="D",
                   help="device to run the layer on here (repeatable; default: cpu and any cuda/mps here)")
    p.add_argument("--format", choices=("terminal", "json"), default="terminal")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from mpsready.record.cli import require_torch

    require_torch("replay")
    from mpsready.replay.engine import replay

    res = replay(args.a, args.b, layer=args.layer, step=args.step, entry=args.entry, devices=args.device)
    if args.format == "json":
        sys.stdout.write(json.dumps(res.to_dict(), indent=1, allow_nan=False, default=str) + "\n")
    else:
        out = [f"replay of layer {res.layer}" + (f" ({res.module_type})" if res.module_type else "")
               + f", step {res.step}: {res.verdict}", f"  {res.note}",
               f"  recorded divergence A vs B: {res.divergence:.3g}; A's own error {res.err_a:.3g}"
               + (f"; B's own error {res.err_b:.3g}; inputs differ by {res.inputs:.3g}" if res.err_b is not None else "")]
        for d in res.devices:
            out.append(f"  {d.device}: layer error {d.error:.3g}"
                       + ("; largest op errors " + ", ".join(f"{o.op} {o.error:.3g}" for o in d.ops[:3]) if d.ops else ""))
        sys.stdout.write("\n".join(out) + "\n")
    return int(ExitCode.FINDINGS if res.verdict == "op" else ExitCode.OK)
