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
from mpsready.commands.replay import register  # noqa: F401  (the arguments: cheap to import)


def run(args: argparse.Namespace) -> int:
    from mpsready.record.cli import require_torch

    require_torch("replay")
    from mpsready.replay.engine import replay

    res = replay(args.a, args.b, layer=args.layer, step=args.step, entry=args.entry, devices=args.device,
                 cwd=getattr(args, "project", None))
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
