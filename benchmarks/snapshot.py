"""Snapshot every output of a checkout, to prove a refactor behaviour-identical: run it before and after, then
``diff -r BEFORE AFTER`` must print nothing (or only what the change meant to alter).

    python benchmarks/snapshot.py CHECKOUT OUTDIR

Runs the CLI from CHECKOUT/src (PYTHONPATH) with this interpreter (torch installed), ``--no-cache``: scan JSON,
SARIF and Markdown of the installed torch package, the demo, every scan fixture, the migrate projects and
../shared/cases; migrate JSON and diffs; ``mpsready rules``; ``mpsready run`` of the demo for torch 2.3 and 2.13.
Keys that hold times, dates or process ids are replaced by ``<t>``, the checkout's path by ``<ROOT>``. Not a
timing benchmark: it lives here beside them because it is run by hand, never by the tests.
"""
import json
import os
import pathlib
import re
import subprocess
import sys

root = pathlib.Path(sys.argv[1]).resolve()
out = pathlib.Path(sys.argv[2])
out.mkdir(parents=True, exist_ok=True)
env = dict(os.environ, PYTHONPATH=str(root / "src"), COLUMNS="200", NO_COLOR="1", MPSREADY_CACHE_DIR="/tmp/snapcache-none")
py = sys.executable
import torch  # noqa: E402

torchdir = pathlib.Path(torch.__file__).parent
TIMEY = re.compile(r"(time|elapsed|duration|_s$|_ms$|_us$|seconds|started|finished|created|date|tmp|pid)", re.I)

def scrub(o):
    """JSON with times and the checkout's path replaced (they differ run to run, checkout to checkout)."""
    if isinstance(o, dict):
        return {k: ("<t>" if TIMEY.search(k) else scrub(v)) for k, v in o.items()}
    if isinstance(o, list):
        return [scrub(v) for v in o]
    if isinstance(o, str):
        return o.replace(str(root), "<ROOT>")
    return o


def go(name, args, cwd=None, js=True):
    """Run ``mpsready ARGS`` and keep its exit code, stdout (scrubbed) and the tail of stderr as NAME.out."""
    p = subprocess.run([py, "-m", "mpsready", *args], env=env, cwd=cwd or root, capture_output=True, text=True,
                       timeout=900)
    text = p.stdout
    if js:
        try:
            text = json.dumps(scrub(json.loads(text)), indent=1, sort_keys=True)
        except ValueError:
            pass  # not JSON (an error text): kept as printed
    else:
        text = text.replace(str(root), "<ROOT>")
    err = p.stderr.replace(str(root), "<ROOT>")[-3000:]
    (out / f"{name}.out").write_text(f"rc={p.returncode}\n{text}\n--stderr--\n{err}")


targets = {"torch": str(torchdir), "demo": "src/mpsready/examples/demo_project"}
for d in sorted((root / "tests/scan/fixtures").iterdir()):
    if d.is_dir():
        targets["fx_" + d.name] = str(d.relative_to(root))
for d in sorted((root / "tests/migrate/projects").iterdir()):
    if d.is_dir():
        targets["mig_" + d.name] = str(d.relative_to(root))
cases = root.parent / "shared/cases"
if cases.exists():
    targets["cases"] = str(cases)
for name, t in targets.items():
    go(f"scan_json_{name}", ["scan", "--no-cache", "--format", "json", "--exit-zero", t])
    if name != "torch":
        go(f"scan_md_{name}", ["scan", "--no-cache", "--format", "md", "--exit-zero", t], js=False)
        go(f"scan_sarif_{name}", ["scan", "--no-cache", "--format", "sarif", "--exit-zero", t])
        go(f"migrate_{name}", ["migrate", "--format", "json", t])
        go(f"migrate_diff_{name}", ["migrate", t], js=False)
go("scan_sarif_torch", ["scan", "--no-cache", "--format", "sarif", "--exit-zero", str(torchdir)])
go("rules", ["rules"], js=False)
for rel in ("2.3", "2.13"):
    go(f"run_demo_{rel}", ["run", "--torch", rel, "--max-steps", "2", "--format", "json", "--", "python", "train.py"],
       cwd=root / "src/mpsready/examples/demo_project")
print("wrote", len(list(out.iterdir())), "files to", out)
