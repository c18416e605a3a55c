"""Scan time and peak memory against input size, for every declaration kind and for notebooks (issue 14).

For each kind it writes one file of about 100 KB, 1 MB and 4 MB into an otherwise empty project, full of
CUDA packages (so nearly every line is a dependency with a finding and a line to place), scans it in a
fresh child process and prints the scan's CPU seconds (the machine this was written on is shared by
several users, so wall time measures the neighbours; the wall time of the 4 MB input is printed too), the
child's peak resident memory, and two ratios: CPU seconds per MB at 1 MB and at 4 MB divided by CPU
seconds per MB at 100 KB. Linear work keeps both near 1 (start-up costs push the first size up and the
ratios below 1); a reader quadratic in its input gives ratios near 10 and 40. The last column checks the
goal of each 4 MB input scanning in under 10 s (CPU) on this machine. The last two kinds are issue 22's
attacks made large: ``setup.cfg-blanks`` (lines with 15,000 blanks and no ``=``, and option names with long blank
runs, which configparser's option regex took hours on) and ``shell-quoted-digits`` (quoted ``pip install``
arguments of 19,000 digits, which shlex lexed in quadratic time).

Each size is scanned ``--repeat`` times (default 3) and the least CPU time is kept: on a shared machine the
same scan's CPU time varies by up to 40 % with the neighbours' load (caches, memory bandwidth), and the least
of a few runs is the figure closest to the scan's own cost (as ``timeit`` reports). Peak memory is the
largest of the runs.

    PYTHONPATH=src python benchmarks/hostile_bench.py [--kinds requirements,notebook] [--sizes 0.1,1,4] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CUDA = ["flash-attn", "nvidia-cudnn-cu12", "triton", "bitsandbytes", "cupy-cuda12x", "xformers", "apex", "deepspeed"]


def _fill(unit, size: int) -> list[str]:
    out, n, i = [], 0, 0
    while n < size:
        part = unit(i)
        out.append(part)
        n += len(part)
        i += 1
    return out


def make(kind: str, size: int) -> tuple[str, str]:
    """(file name, text of about ``size`` bytes)."""
    pkg = lambda i: f"{CUDA[i % len(CUDA)]}=={i % 97}.{i}"  # noqa: E731
    if kind == "requirements":
        return "requirements.txt", "".join(_fill(lambda i: f"{pkg(i)} ; python_version >= '3.8'  # pin {i}\n", size))
    if kind == "pyproject":
        body = "".join(_fill(lambda i: f'  "{pkg(i)}",\n', size))
        return "pyproject.toml", f'[project]\nname = "x"\ndependencies = [\n{body}]\n'
    if kind == "setup.py":
        body = "".join(_fill(lambda i: f'        "{pkg(i)}",\n', size))
        return "setup.py", f"from setuptools import setup\nsetup(\n    install_requires=[\n{body}    ],\n)\n"
    if kind == "setup.cfg":
        return "setup.cfg", "[options]\ninstall_requires =\n" + "".join(_fill(lambda i: f"    {pkg(i)}\n", size))
    if kind == "conda":
        body = "".join(_fill(lambda i: f"  - pytorch-cuda=12.{i}\n  - cudatoolkit=11.{i}\n", size // 2))
        pip = "".join(_fill(lambda i: f"    - {pkg(i)}\n", size // 2))
        return "environment.yml", f"name: x\nchannels:\n  - nvidia\ndependencies:\n{body}  - pip:\n{pip}"
    if kind == "Pipfile":
        body = "".join(_fill(lambda i: f'{CUDA[i % len(CUDA)]}-{i} = "=={i}"\n', size))
        return "Pipfile", f'[[source]]\nurl = "https://download.pytorch.org/whl/cu121"\n[packages]\n{body}'
    if kind == "Pipfile.lock":
        n = max(1, size // 60)
        return "Pipfile.lock", json.dumps({"default": {f"{CUDA[i % len(CUDA)]}-{i}": {"version": f"=={i}"}
                                                       for i in range(n)}}, indent=4)
    if kind == "poetry.lock":
        return "poetry.lock", "".join(_fill(lambda i: f'[[package]]\nname = "{CUDA[i % len(CUDA)]}-{i}"\nversion = "{i}"\n\n', size))
    if kind == "uv.lock":  # a graph: each package points at the next two, one edge with its own Linux marker
        def entry(i: int) -> str:
            nxt = f"{CUDA[(i + 1) % len(CUDA)]}-{i + 1}"
            return (f'[[package]]\nname = "{CUDA[i % len(CUDA)]}-{i}"\nversion = "{i}"\n'
                    f'source = {{ registry = "https://pypi.org/simple" }}\ndependencies = [\n'
                    f'    {{ name = "{nxt}", marker = "sys_platform == \'linux\' and python_full_version >= \'3.{i}\'" }},\n'
                    f'    {{ name = "{CUDA[(i + 2) % len(CUDA)]}-{i + 2}" }},\n]\n\n')
        return "uv.lock", "version = 1\nrequires-python = \">=3.9\"\n\n" + "".join(_fill(entry, size))
    if kind == "Dockerfile":
        return "Dockerfile", "FROM nvidia/cuda:12.1.0-devel\n" + "".join(_fill(lambda i: f"RUN pip install {pkg(i)} && echo {i}\n", size))
    if kind == "shell":
        return "install.sh", "".join(_fill(lambda i: f"pip install --extra-index-url https://x/cu121 {pkg(i)}\n", size))
    # issue 22's attacks, at every size: lines configparser's option regex and shlex were super-linear on
    if kind == "setup.cfg-blanks":  # option lines with long blank runs and no delimiter, between real ones
        return "setup.cfg", "[options]\ninstall_requires =\n    flash-attn\n" + "".join(
            _fill(lambda i: f"x{' ' * 15000}x\nname{' ' * 300}more = {i}\n", size))
    if kind == "shell-quoted-digits":  # quoted pip install arguments of long digit runs (under the line bound)
        return "install.sh", "".join(_fill(lambda i: f'pip install "{str(i % 10) * 19000}" {pkg(i)}\n', size))
    if kind in ("notebook", "notebook-one-line"):
        cell = lambda i: {"cell_type": "code", "execution_count": i, "metadata": {}, "outputs": [],  # noqa: E731
                          "source": [f"!pip install {pkg(i)}\n", "import torch\n", f"x{i} = torch.ones({i}).cuda()\n"]}
        n = max(1, size // (260 if kind == "notebook" else 180))
        doc = {"cells": [cell(i) for i in range(n)], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
        return "a.ipynb", json.dumps(doc, indent=1) if kind == "notebook" else json.dumps(doc)
    raise SystemExit(f"unknown kind {kind}")


KINDS = ["requirements", "pyproject", "setup.py", "setup.cfg", "conda", "Pipfile", "Pipfile.lock", "poetry.lock", "uv.lock",
         "Dockerfile", "shell", "notebook", "notebook-one-line", "setup.cfg-blanks", "shell-quoted-digits"]

CHILD = """
import json, resource, sys, time


def peak_mb():
    # VmHWM (Linux) is this process's own high-water mark; ru_maxrss also counts the parent's size at fork
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r / 2**20 if sys.platform == "darwin" else r / 1024

from mpsready.scan import ScanConfig, scan_path
t, c = time.perf_counter(), time.process_time()
r = scan_path(sys.argv[1], ScanConfig(cache_dir=None, jobs=1))
dt, dc = time.perf_counter() - t, time.process_time() - c
print(json.dumps({"wall": dt, "seconds": dc, "findings": len(r.findings), "deps": len(r.dependencies),
                  "rss_mb": peak_mb()}))
"""


def measure(kind: str, size: int, repeat: int) -> dict:
    name, text = make(kind, size)
    runs = []
    with tempfile.TemporaryDirectory() as d:
        Path(d, name).write_text(text, encoding="utf-8")
        env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1] / "src"))
        for _ in range(repeat):
            out = subprocess.run([sys.executable, "-c", CHILD, d], capture_output=True, text=True, env=env, check=True)
            runs.append(json.loads(out.stdout))
    row = min(runs, key=lambda r: r["seconds"])
    row["rss_mb"] = max(r["rss_mb"] for r in runs)
    row["bytes"] = len(text.encode())
    return row


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--sizes", default="0.1,1,4", help="MB, comma-separated (the first is the ratios' base)")
    ap.add_argument("--repeat", type=int, default=3, help="scans per size; the least CPU time is kept")
    args = ap.parse_args()
    sizes = [int(float(s) * 1_000_000) for s in args.sizes.split(",")]
    print(f"{'kind':<18}" + "".join(f"{f'{s / 1e6:g} MB cpu':>11}{'MB rss':>8}" for s in sizes)
          + "".join(f"{f'ratio {s / 1e6:g}':>10}" for s in sizes[1:]) + f"{'wall@max':>9}{'deps@max':>10}  max<10s")
    worst = None
    for kind in args.kinds.split(","):
        rows = [measure(kind, s, max(1, args.repeat)) for s in sizes]
        base = rows[0]["seconds"] / rows[0]["bytes"]
        ratios = [(r["seconds"] / r["bytes"]) / base for r in rows[1:]]
        worst = max([worst or 0.0, *ratios]) if ratios else worst
        ok = "yes" if rows[-1]["seconds"] < 10 else "NO"
        print(f"{kind:<18}" + "".join(f"{r['seconds']:>11.2f}{r['rss_mb']:>8.0f}" for r in rows)
              + "".join(f"{x:>10.2f}" for x in ratios) + f"{rows[-1]['wall']:>9.2f}{rows[-1]['deps']:>10}  {ok}",
              flush=True)
    shown = f"{worst:.2f} (1.0 is linear)" if worst is not None else "n/a (one size only)"
    print(f"largest per-MB ratio: {shown}; CPU seconds: the least of {max(1, args.repeat)} run(s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
