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

``--attacks`` runs the attack rounds of issue 34 instead (``--fresh``: only round 5's, :data:`FRESH`): each
attack sets up a hostile project, record, cache or command line in a fresh temporary folder, runs one
``mpsready`` command in a child process (120 s bound: a hang is a failure) and checks one outcome (the exit
code, a file untouched, a process gone, a command never run, byte-exact escaped output). It prints one line
per attack and a table per command: tried, survived, failed. ``--only scan,migrate`` runs the attacks of those
commands.

    PYTHONPATH=src python benchmarks/hostile_bench.py --attacks [--only COMMANDS]
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


# ---------------------------------------------------------------- the attack round (issue 34)

SRC = Path(__file__).resolve().parents[1] / "src"
CUDA_PY = "import torch\nx = torch.ones(1).cuda()\n"


def mps(*args: str, cwd: str | Path | None = None, env: dict | None = None, timeout: float = 120,
        stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """``python -m mpsready ARGS`` in a child; a run past ``timeout`` comes back with returncode ``None``."""
    full = dict(os.environ, PYTHONPATH=str(SRC), **(env or {}))
    try:
        return subprocess.run([sys.executable, "-m", "mpsready", *args], cwd=cwd, env=full, capture_output=True,
                              timeout=timeout, input=stdin)
    except subprocess.TimeoutExpired as exc:
        return subprocess.CompletedProcess(exc.cmd, None, exc.stdout or b"", exc.stderr or b"")  # type: ignore[arg-type]


def _proj(d: Path, files: dict[str, str | bytes]) -> Path:
    root = d / "proj"
    root.mkdir(exist_ok=True)
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return root


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def _gone(pid: int, seconds: float = 20) -> bool:
    import time

    end = time.monotonic() + seconds
    while _alive(pid) and time.monotonic() < end:
        time.sleep(0.05)
    return not _alive(pid)


def _git(root: Path, *a: str) -> None:
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *a], check=True,
                   capture_output=True)


def _repo_with(d: Path, config: str, extra: dict[str, str] | None = None) -> tuple[Path, Path]:
    root = _proj(d, {"a.py": "x = 1\n", **(extra or {})})
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "one")
    marker = d / "RAN"
    with open(root / ".git" / "config", "a") as fh:
        fh.write(config.format(marker=marker))
    (root / "a.py").write_text("x = 2\n")  # dirty: status would consult the monitor and the filters
    return root, marker


def _scan_cache(d: Path) -> tuple[Path, Path]:
    root = _proj(d, {"train.py": CUDA_PY})
    cache = d / "cache"
    mps("scan", str(root), "--cache-dir", str(cache), "-q")
    (entry,) = [p for p in cache.iterdir() if p.name.startswith("scan-")]
    return root, entry


def a_scan_cache_fifo(d):
    root, entry = _scan_cache(d)
    entry.unlink()
    os.mkfifo(entry)
    r = mps("scan", str(root), "--cache-dir", str(d / "cache"), "-q")
    return r.returncode == 1, f"exit {r.returncode}"


def a_scan_cache_dev_zero(d):
    root, entry = _scan_cache(d)
    entry.unlink()
    os.symlink("/dev/zero", entry)
    r = mps("scan", str(root), "--cache-dir", str(d / "cache"), "-q")
    return r.returncode == 1, f"exit {r.returncode}"


def a_scan_cache_edited(d):
    root, entry = _scan_cache(d)
    head, _, payload = entry.read_bytes().partition(b"\n")
    doc = json.loads(payload or head)
    for v in doc["entries"].values():
        v["findings"] = []
    entry.write_bytes(head + b"\n" + json.dumps(doc).encode())
    r = mps("scan", str(root), "--cache-dir", str(d / "cache"), "-q")
    return r.returncode == 1, f"exit {r.returncode} (1: the .cuda() call still found)"


def a_scan_cache_world_writable(d):
    root = _proj(d, {"train.py": CUDA_PY})
    cache = d / "shared"
    cache.mkdir()
    os.chmod(cache, 0o777)
    r = mps("scan", str(root), "--cache-dir", str(cache))
    return r.returncode == 1 and list(cache.iterdir()) == [] and b"writable by others" in r.stderr, \
        f"exit {r.returncode}, {len(list(cache.iterdir()))} files written"


def a_scan_cache_other_users_key(d):
    root, entry = _scan_cache(d)
    (d / "cache" / "secret").chmod(0o644)
    r = mps("scan", str(root), "--cache-dir", str(d / "cache"))
    return r.returncode == 1 and b"cache key" in r.stderr, f"exit {r.returncode}"


def a_scan_broken_pyproject(d):
    root = _proj(d, {"pyproject.toml": '[project]\ndependencies = ["flash-attn"\n', "train.py": "import torch\n"})
    r = mps("scan", str(root), "--no-cache", "-q")
    return r.returncode == 1, f"exit {r.returncode} (a TOML error used to give runs_on_mac, exit 0)"


def a_scan_broken_environment_yml(d):
    root = _proj(d, {"environment.yml": "dependencies: [pytorch-cuda\n  - : :\n", "train.py": "import torch\n"})
    r = mps("scan", str(root), "--no-cache", "-q")
    return r.returncode == 1, f"exit {r.returncode}"


def a_scan_gitignore_star(d):
    root = _proj(d, {".gitignore": "*\n", "train.py": CUDA_PY})
    r = mps("scan", str(root), "--no-cache", "-q")
    return r.returncode == 1, f"exit {r.returncode}"


def a_scan_exclude_all(d):
    root = _proj(d, {"pyproject.toml": '[tool.mpsready]\nexclude = ["**"]\n', "train.py": CUDA_PY})
    r = mps("scan", str(root), "--no-cache", "-q")
    return r.returncode == 1, f"exit {r.returncode}"


def a_scan_max_file_size_1(d):
    root = _proj(d, {"pyproject.toml": "[tool.mpsready]\nmax-file-size = 1\n", "train.py": CUDA_PY})
    r = mps("scan", str(root), "--no-cache", "-q")
    return r.returncode == 1, f"exit {r.returncode}"


def a_scan_sarif_non_utf8_name(d):
    root = _proj(d, {})
    with open(os.path.join(os.fsencode(root), b"bad\xff.py"), "wb") as fh:
        fh.write(CUDA_PY.encode())
    r = mps("scan", str(root), "--no-cache", "--format", "sarif")
    try:
        json.loads(r.stdout.decode("utf-8"))
        ok = r.returncode == 1
    except ValueError:
        ok = False
    return ok, f"exit {r.returncode}"


def a_scan_json_non_utf8_name(d):
    root = _proj(d, {})
    with open(os.path.join(os.fsencode(root), b"bad\xfe.py"), "wb") as fh:
        fh.write(CUDA_PY.encode())
    r = mps("scan", str(root), "--no-cache", "--format", "json")
    try:
        r.stdout.decode("utf-8")
        ok = r.returncode == 1 and b"\\udcfe" not in r.stdout
    except UnicodeDecodeError:
        ok = False
    return ok, f"exit {r.returncode}"


def a_scan_bidi_name_terminal(d):
    root = _proj(d, {"ev\u202eil.py": CUDA_PY, "zero\u200bwidth.py": CUDA_PY})
    r = mps("scan", str(root), "--no-cache", "--format", "github")
    return r.returncode == 1 and "\u202e".encode() not in r.stdout and "\u200b".encode() not in r.stdout, \
        f"exit {r.returncode}"


def a_scan_newline_name_md(d):
    root = _proj(d, {"a\nb|c.py": CUDA_PY})
    r = mps("scan", str(root), "--no-cache", "--format", "md")
    return r.returncode == 1 and b"a\\x0ab\\|c.py" in r.stdout, f"exit {r.returncode}"


def a_scan_output_is_folder(d):
    root = _proj(d, {"train.py": CUDA_PY})
    (d / "out").mkdir()
    r = mps("scan", str(root), "--no-cache", "-o", str(d / "out"))
    return r.returncode == 2 and list((d / "out").iterdir()) == [] and not (d / "out.tmp").exists(), \
        f"exit {r.returncode}"


def a_scan_output_planted_link(d):
    root = _proj(d, {"train.py": CUDA_PY})
    victim = d / "victim"
    victim.write_text("theirs")
    os.symlink(victim, d / "report.txt")
    r = mps("scan", str(root), "--no-cache", "-o", str(d / "report.txt"))
    return r.returncode == 1 and victim.read_text() == "theirs", f"exit {r.returncode}"


def a_migrate_verify_abs_symlink(d):
    root = _proj(d, {"train.py": "open('link.txt', 'a').write('X')\n"})
    data_in = root / "data.txt"
    data_in.write_text("mine")
    os.symlink(data_in, root / "link.txt")
    mps("migrate", str(root), "--no-cache", "--verify", "--torch", "2.13", "--", sys.executable, "train.py")
    return data_in.read_text() == "mine", "data file unchanged" if data_in.read_text() == "mine" else "written through"


def a_migrate_verify_hard_link(d):
    root = _proj(d, {"train.py": "open('big.bin', 'ab').write(b'X')\n"})
    (root / "big.bin").write_bytes(b"0" * (17 << 20))
    os.link(root / "big.bin", d / "elsewhere.bin")
    mps("migrate", str(root), "--no-cache", "--verify", "--torch", "2.13", "--", sys.executable, "train.py")
    return os.path.getsize(d / "elsewhere.bin") == 17 << 20, "hard-linked data unchanged"


def a_migrate_verify_cwd_escape(d):
    root = _proj(d, {"train.py": "open('RAN', 'w')\n"})
    tmp = d / "tmp"  # the copies go here: ../.. from a copy stays inside d (a stale /tmp/RAN is not this run's)
    tmp.mkdir()
    r = mps("migrate", str(root), "--no-cache", "--verify", "--cwd", "../..", "--", sys.executable,
            str(root / "train.py"), env={"TMPDIR": str(tmp)})
    return r.returncode == 2 and not list(d.rglob("RAN")), f"exit {r.returncode}"


def a_migrate_verify_cwd_absolute(d):
    root = _proj(d, {"train.py": "open('RAN', 'w')\n"})
    r = mps("migrate", str(root), "--no-cache", "--verify", "--cwd", str(root), "--", sys.executable, "train.py")
    return r.returncode == 2 and not (root / "RAN").exists(), f"exit {r.returncode}"


def a_migrate_verify_sigterm(d):
    import signal
    import time

    tmp = d / "tmp"
    tmp.mkdir()
    pid_file = d / "pid"
    root = _proj(d, {"train.py": f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
                                 "time.sleep(60)\n"})
    env = dict(os.environ, PYTHONPATH=str(SRC), TMPDIR=str(tmp))
    parent = subprocess.Popen([sys.executable, "-m", "mpsready", "migrate", str(root), "--no-cache", "--verify",
                               "--torch", "2.13", "--", sys.executable, "train.py"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    end = time.monotonic() + 60
    while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < end:
        time.sleep(0.05)
    program = int(pid_file.read_text())
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    gone = _gone(program)
    time.sleep(0.5)
    left = [p.name for p in tmp.iterdir() if p.name.startswith("mpsready-verify-")]
    return gone and not left, f"program {'gone' if gone else 'alive'}, {len(left)} copies left (SIGKILL)"


def a_migrate_planted_plan(d):
    root = _proj(d, {"train.py": CUDA_PY})
    cache = d / "cache"
    mps("migrate", str(root), "--cache-dir", str(cache), "-q")
    (plan,) = [p for p in cache.iterdir() if p.name.startswith("migrate-plan-")]
    raw = plan.read_bytes()
    body = raw.split(b"\n", 1)[-1]
    doc = json.loads(body)
    doc["plan"]["files"][0]["after"] = "import os\nos.system('echo pwned')\n"
    plan.write_text(json.dumps(doc))
    mps("migrate", str(root), "--apply", "--cache-dir", str(cache), "-q")
    return "os.system" not in (root / "train.py").read_text(), "planted plan not applied"


def a_migrate_lambda_chain(d):
    root = _proj(d, {"a.py": "import torch\nf = " + "lambda: " * 5000 + "0\nx = torch.ones(1).cuda()\n"})
    r = mps("migrate", str(root), "--no-cache", "-q")
    return r.returncode == 0 and b"nested too deeply" in r.stderr, f"exit {r.returncode}"


def a_migrate_apply_hard_link(d):
    root = _proj(d, {"train.py": CUDA_PY})
    os.link(root / "train.py", d / "other.py")
    r = mps("migrate", str(root), "--no-cache", "--apply")
    return r.returncode == 1 and (d / "other.py").read_text() == (root / "train.py").read_text() == CUDA_PY, \
        f"exit {r.returncode}"


def a_migrate_error_prefix(d):
    r = mps("migrate", str(d), "--select", "NOPE999")
    return r.returncode == 2 and r.stderr.startswith(b"mpsready migrate: error:"), r.stderr[:40].decode(errors="replace")


def a_migrate_summary_control_chars(d):
    root = _proj(d, {"e\x1b[2Jvil.py": CUDA_PY})
    r = mps("migrate", str(root), "--no-cache", "--apply")
    return r.returncode == 0 and b"\x1b" not in r.stderr, f"exit {r.returncode}"


def _record(d: Path) -> Path:
    rec = d / "run"
    r = mps("record", "tests.record.entries:small_cnn", "--device", "cpu", "--steps", "1", "--out", str(rec), "-q",
            cwd=SRC.parent, timeout=300)
    assert r.returncode == 0, r.stderr[-500:]
    return rec


def a_record_force_not_a_record(d):
    home = _proj(d, {"record.json": '{"schema": {"name": "mpsready.record", "version": 1}}', "thesis.tex": "x"})
    r = mps("record", "mod:fn", "--device", "cpu", "--out", str(home), "--force")
    return r.returncode == 2 and (home / "thesis.tex").exists(), f"exit {r.returncode}"


def a_record_force_real_record_plus_file(d):
    rec = _record(d)
    (rec / "notes.txt").write_text("mine")
    r = mps("record", "tests.record.entries:small_cnn", "--device", "cpu", "--steps", "1", "--out", str(rec),
            "--force", cwd=SRC.parent, timeout=300)
    return r.returncode == 2 and (rec / "notes.txt").read_text() == "mine", f"exit {r.returncode}"


def a_record_force_link(d):
    target = _proj(d, {"keep.txt": "x"})
    os.symlink(target, d / "link")
    r = mps("record", "mod:fn", "--device", "cpu", "--out", str(d / "link"), "--force")
    return r.returncode == 2 and (target / "keep.txt").exists(), f"exit {r.returncode}"


def a_env_fsmonitor(d):
    root, marker = _repo_with(d, "[core]\n\tfsmonitor = touch {marker}\n")
    r = mps("env", "--project", str(root), "--format", "json")
    return not marker.exists() and r.returncode in (0, 1), f"exit {r.returncode}, command run: {marker.exists()}"


def a_env_clean_filter(d):
    root, marker = _repo_with(d, "[filter \"x\"]\n\tclean = touch {marker}\n", {".gitattributes": "*.py filter=x\n"})
    r = mps("env", "--project", str(root), "--format", "json")
    return not marker.exists() and r.returncode in (0, 1), f"exit {r.returncode}, command run: {marker.exists()}"


def a_env_hooks(d):
    root, marker = _repo_with(d, "[core]\n\thooksPath = {marker}.hooks\n")
    hooks = Path(f"{marker}.hooks")
    hooks.mkdir()
    for hook in ("post-index-change", "reference-transaction"):
        (hooks / hook).write_text(f"#!/bin/sh\ntouch {marker}\n")
        (hooks / hook).chmod(0o755)
    r = mps("env", "--project", str(root), "--format", "json")
    return not marker.exists(), f"exit {r.returncode}"


def a_env_index_fifo(d):
    root, _marker = _repo_with(d, "")
    (root / ".git" / "index").unlink()
    os.mkfifo(root / ".git" / "index")
    r = mps("env", "--project", str(root), "--format", "json")
    return r.returncode in (0, 1), f"exit {r.returncode}"


def a_env_output_folder(d):
    (d / "out").mkdir()
    r = mps("env", "-o", str(d / "out"))
    return r.returncode == 2, f"exit {r.returncode}"


def _replay_records(d: Path, entry: str) -> tuple[Path, Path]:
    here = SRC.parent / "tests" / "numerics"
    recs = []
    for name in ("a", "b"):
        out = d / name
        r = mps("record", "entries.py:replay_model", "--device", "cpu", "--steps", "1", "--out", str(out),
                "--save-inputs", "mid", "-q", cwd=here, timeout=300)
        assert r.returncode == 0, r.stderr[-400:]
        recs.append(out)
    doc = json.loads((recs[0] / "record.json").read_text())
    doc["entry"] = entry
    (recs[0] / "record.json").write_text(json.dumps(doc))
    return recs[0], recs[1]


def a_replay_entry_outside(d):
    evil = d / "evil.py"
    evil.write_text(f"open({str(d / 'RAN')!r}, 'w')\ndef replay_model():\n    pass\n")
    a, b = _replay_records(d, f"{evil}:replay_model")
    r = mps("replay", str(a), str(b), "--layer", "mid", "--device", "cpu", cwd=SRC.parent / "tests" / "numerics", timeout=300)
    return r.returncode == 2 and not (d / "RAN").exists(), f"exit {r.returncode}"


def a_replay_installed_module_entry(d):
    a, b = _replay_records(d, "antigravity:fly")
    r = mps("replay", str(a), str(b), "--layer", "mid", "--device", "cpu", cwd=SRC.parent / "tests" / "numerics", timeout=300)
    return r.returncode == 2 and b"is not a file inside" in r.stderr, f"exit {r.returncode}"


def a_replay_entry_raises(d):
    proj = _proj(d, {"broken.py": "raise RuntimeError('no data')\n"})
    a, b = _replay_records(d, "broken.py:replay_model")
    r = mps("replay", str(a), str(b), "--layer", "mid", "--device", "cpu", "--project", str(proj), timeout=300)
    return r.returncode == 2 and b"raised RuntimeError: no data" in r.stderr, f"exit {r.returncode}"


PLUGIN_EXIT = "import os, torch\ndef test_a():\n    try:\n        torch.ones(2, dtype=torch.float64, device='mps')\n" \
              "    except TypeError:\n        pass\n    os._exit(0)\n"


def _pytest(d: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(SRC))
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "mpsready.pytest_plugin", "-p", "no:cacheprovider",
                           "-q", *args], cwd=d, env=env, capture_output=True, timeout=300)


def a_plugin_os_exit(d):
    (d / "test_x.py").write_text(PLUGIN_EXIT)
    _pytest(d, "--mps-emulate=2.5", "--mps-json=doc.json")
    try:
        doc = json.loads((d / "doc.json").read_text())
    except (OSError, ValueError):
        return False, "no document"
    return doc["gate"]["failed"] is True, f"gate failed: {doc['gate']['failed']}"


def a_plugin_json_folder(d):
    (d / "test_x.py").write_text("def test_a():\n    pass\n")
    (d / "out").mkdir()
    r = _pytest(d, "--mps-emulate=2.5", "--mps-json=out")
    return r.returncode == 4 and not (d / "out.tmp").exists(), f"exit {r.returncode}"


def a_plugin_planted_tmp_link(d):
    (d / "test_x.py").write_text("def test_a():\n    pass\n")
    (d / "victim").write_text("theirs")
    os.symlink(d / "victim", d / "doc.json.tmp")
    _pytest(d, "--mps-emulate=2.5", "--mps-json=doc.json")
    return (d / "victim").read_text() == "theirs", "victim untouched"


def a_run_xdist(d):
    r = mps("run", "--", "pytest", "-n", "2", cwd=d)
    return r.returncode == 2 and b"xdist" in r.stderr, f"exit {r.returncode}"


def a_run_setsid_daemon(d):
    pid_file = d / "daemon.pid"
    (d / "prog.py").write_text(
        "import os, subprocess, sys, time\n"
        "code = ('import os, time\\nif os.fork() == 0:\\n    os.setsid()\\n    fd = os.open(os.devnull, os.O_RDWR)\\n'\n"
        "        '    [os.dup2(fd, i) for i in (0, 1, 2)]\\n    open(%r, \"w\").write(str(os.getpid()))\\n'\n"
        "        '    time.sleep(60)\\n')\n"
        "subprocess.run([sys.executable, '-c', code % sys.argv[1]])\n"
        "for _ in range(200):\n"
        "    if os.path.exists(sys.argv[1]) and open(sys.argv[1]).read():\n        break\n    time.sleep(0.05)\n")
    mps("run", "-q", "--", sys.executable, "prog.py", str(pid_file), cwd=d, timeout=300)
    pid = int(pid_file.read_text())
    return _gone(pid), "daemon ended" if not _alive(pid) else "daemon survived"


def a_run_output_folder(d):
    (d / "prog.py").write_text(f"open({str(d / 'RAN')!r}, 'w')\n")
    (d / "out").mkdir()
    r = mps("run", "-o", str(d / "out"), "--", sys.executable, "prog.py", cwd=d)
    return r.returncode == 2 and not (d / "RAN").exists(), f"exit {r.returncode}"


def a_run_closes_stdio(d):
    (d / "prog.py").write_text("import os, torch\nos.close(1)\nos.close(2)\n"
                               "torch.ones(2, dtype=torch.float64, device='mps')\n")
    r = mps("run", "--format", "json", "-o", str(d / "doc.json"), "--", sys.executable, "prog.py", cwd=d, timeout=300)
    try:
        doc = json.loads((d / "doc.json").read_text())
    except (OSError, ValueError):
        return False, f"exit {r.returncode}, no document"
    return doc.get("outcome") == "failed" and bool(doc.get("first_failure")), f"outcome {doc.get('outcome')}"


def a_run_multiprocessing_child(d):
    (d / "prog.py").write_text(
        "import multiprocessing as mp, torch\n"
        "def work(_):\n    torch.ones(2, dtype=torch.float64, device='mps')\n"
        "if __name__ == '__main__':\n    with mp.get_context('spawn').Pool(1) as p:\n        p.map(work, [0])\n")
    r = mps("run", "--format", "json", "-o", str(d / "doc.json"), "--", sys.executable, "prog.py", cwd=d, timeout=300)
    try:
        doc = json.loads((d / "doc.json").read_text())
    except (OSError, ValueError):
        return False, f"exit {r.returncode}, no document"
    return doc.get("outcome") == "failed", f"outcome {doc.get('outcome')} (failed: the child's Mac failure)"


def a_run_torch_mp_spawn(d):
    (d / "prog.py").write_text(
        "import torch, torch.multiprocessing as tmp\n"
        "def work(rank):\n    torch.ones(2, dtype=torch.float64, device='mps')\n"
        "if __name__ == '__main__':\n    tmp.spawn(work, nprocs=1)\n")
    r = mps("run", "--format", "json", "-o", str(d / "doc.json"), "--", sys.executable, "prog.py", cwd=d, timeout=300)
    try:
        doc = json.loads((d / "doc.json").read_text())
    except (OSError, ValueError):
        return False, f"exit {r.returncode}, no document"
    return doc.get("outcome") == "failed", f"outcome {doc.get('outcome')}"


def a_run_thread(d):
    (d / "prog.py").write_text(
        "import _thread, time, torch\nres = []\n"
        "def work():\n    res.append(torch.ones(2, device='mps').device.type)\n"
        "_thread.start_new_thread(work, ())\ntime.sleep(2)\nprint(res)\n")
    r = mps("run", "--format", "json", "-o", str(d / "doc.json"), "--", sys.executable, "prog.py", cwd=d, timeout=300)
    try:
        doc = json.loads((d / "doc.json").read_text())
    except (OSError, ValueError):
        return False, f"exit {r.returncode}, no document"
    return bool(doc.get("mps_used")), f"mps_used {doc.get('mps_used')}"


def a_compare_output_folder(d):
    (d / "out").mkdir()
    r = mps("compare", str(d / "a"), str(d / "b"), "-o", str(d / "out"))
    return r.returncode == 2 and list((d / "out").iterdir()) == [], f"exit {r.returncode}"


def a_compare_fifo_manifest(d):
    for name in ("a", "b"):
        (d / name).mkdir()
        os.mkfifo(d / name / "record.json")
    r = mps("compare", str(d / "a"), str(d / "b"))
    return r.returncode == 2, f"exit {r.returncode}"


def a_report_fifo_evidence(d):
    os.mkfifo(d / "scan.json")
    r = mps("report", "--scan", str(d / "scan.json"), "--format", "json")
    return r.returncode == 2, f"exit {r.returncode}"


def a_report_tests_unfinished(d):
    (d / "test_x.py").write_text(PLUGIN_EXIT)
    _pytest(d, "--mps-emulate=2.5", "--mps-json=doc.json")
    r = mps("report", "--tests", str(d / "doc.json"), "--format", "json")
    return r.returncode != 0, f"exit {r.returncode} (the unfinished session's failure counted)"


def a_ops_output_folder(d):
    (d / "out").mkdir()
    r = mps("ops", "--dump-installed", "-o", str(d / "out"))
    return r.returncode == 2, f"exit {r.returncode}"


def a_trace_output_folder(d):
    (d / "out").mkdir()
    (d / "e.py").write_text(f"open({str(d / 'RAN')!r}, 'w')\ndef step():\n    pass\n")
    r = mps("trace", "e.py:step", "-o", str(d / "out"), cwd=d)
    return r.returncode == 2 and not (d / "RAN").exists(), f"exit {r.returncode}"


def a_rules_broken_pipe(d):
    env = dict(os.environ, PYTHONPATH=str(SRC))
    p = subprocess.run(f"{sys.executable} -m mpsready rules --format json | head -c 10", shell=True, env=env,
                       capture_output=True, timeout=120)
    return b"Traceback" not in p.stderr, "no traceback"


def a_check_fsmonitor(d):
    root, marker = _repo_with(d, "[core]\n\tfsmonitor = touch {marker}\n")
    mps("check", str(root), "--skip-record", "--out", str(d / "out"), "-q", timeout=300)
    return not marker.exists(), f"command run: {marker.exists()}"


ATTACKS = [
    ("scan", a_scan_cache_fifo), ("scan", a_scan_cache_dev_zero), ("scan", a_scan_cache_edited),
    ("scan", a_scan_cache_world_writable), ("scan", a_scan_cache_other_users_key), ("scan", a_scan_broken_pyproject),
    ("scan", a_scan_broken_environment_yml), ("scan", a_scan_gitignore_star), ("scan", a_scan_exclude_all),
    ("scan", a_scan_max_file_size_1), ("scan", a_scan_sarif_non_utf8_name), ("scan", a_scan_json_non_utf8_name),
    ("scan", a_scan_bidi_name_terminal), ("scan", a_scan_newline_name_md), ("scan", a_scan_output_is_folder),
    ("scan", a_scan_output_planted_link),
    ("migrate", a_migrate_verify_abs_symlink), ("migrate", a_migrate_verify_hard_link),
    ("migrate", a_migrate_verify_cwd_escape), ("migrate", a_migrate_verify_cwd_absolute),
    ("migrate", a_migrate_verify_sigterm), ("migrate", a_migrate_planted_plan), ("migrate", a_migrate_lambda_chain),
    ("migrate", a_migrate_apply_hard_link), ("migrate", a_migrate_error_prefix),
    ("migrate", a_migrate_summary_control_chars),
    ("record", a_record_force_not_a_record), ("record", a_record_force_real_record_plus_file),
    ("record", a_record_force_link),
    ("env", a_env_fsmonitor), ("env", a_env_clean_filter), ("env", a_env_hooks), ("env", a_env_index_fifo),
    ("env", a_env_output_folder),
    ("check", a_check_fsmonitor),
    ("replay", a_replay_entry_outside), ("replay", a_replay_installed_module_entry), ("replay", a_replay_entry_raises),
    ("pytest plugin", a_plugin_os_exit), ("pytest plugin", a_plugin_json_folder),
    ("pytest plugin", a_plugin_planted_tmp_link),
    ("run", a_run_xdist), ("run", a_run_setsid_daemon), ("run", a_run_output_folder), ("run", a_run_closes_stdio),
    ("run", a_run_multiprocessing_child), ("run", a_run_torch_mp_spawn), ("run", a_run_thread),
    ("compare", a_compare_output_folder), ("compare", a_compare_fifo_manifest),
    ("report", a_report_fifo_evidence), ("report", a_report_tests_unfinished),
    ("ops", a_ops_output_folder), ("trace", a_trace_output_folder), ("rules", a_rules_broken_pipe),
]


# ---------------------------------------------------------------------------------------------------------------
# Round 5 (issue 34, reliability round 4's own fresh run): attacks not tried before, on every command, including
# those the issue does not name (kit, learn, ops, trace, rules, demo's siblings). ``--fresh`` runs only these.

def _tar(path: Path, members: list[tuple[str, bytes | None, str | None]]) -> None:
    """A gzip tar at ``path``: (name, data, link target) per member (data None and a target: a symlink)."""
    import io
    import tarfile

    with tarfile.open(path, "w:gz") as tf:
        for name, data, link in members:
            info = tarfile.TarInfo(name)
            if link is not None:
                info.type, info.linkname = tarfile.SYMTYPE, link
                tf.addfile(info)
            else:
                info.size = len(data or b"")
                tf.addfile(info, io.BytesIO(data or b""))


def _victim(d: Path) -> Path:
    v = d / "victim.txt"
    v.write_text("theirs")
    return v


def f_scan_setup_py_never_run(d):
    marker = d / "RAN"
    root = _proj(d, {"setup.py": f"open({str(marker)!r}, 'w')\nfrom setuptools import setup\nsetup(install_requires=['torch'])\n",
                     "conftest.py": f"open({str(marker)!r}, 'w')\n", "sitecustomize.py": f"open({str(marker)!r}, 'w')\n"})
    r = mps("scan", str(root), "--no-cache", "-q")
    return r.returncode in (0, 1) and not marker.exists(), f"exit {r.returncode}, code run: {marker.exists()}"


def f_scan_baseline_fifo(d):
    root = _proj(d, {"train.py": CUDA_PY})
    os.mkfifo(d / "base.json")
    r = mps("scan", str(root), "--no-cache", "--baseline", str(d / "base.json"), timeout=60)
    return r.returncode == 2, f"exit {r.returncode}"


def f_scan_baseline_deep_json(d):
    root = _proj(d, {"train.py": CUDA_PY})
    (d / "base.json").write_text("[" * 200000 + "]" * 200000)
    r = mps("scan", str(root), "--no-cache", "--baseline", str(d / "base.json"))
    return r.returncode == 2 and b"Traceback" not in r.stderr, f"exit {r.returncode}"


def f_scan_write_baseline_planted_link(d):
    root = _proj(d, {"train.py": CUDA_PY})
    victim = _victim(d)
    os.symlink(victim, d / "base.json")
    r = mps("scan", str(root), "--no-cache", "--write-baseline", str(d / "base.json"))
    return victim.read_text() == "theirs", f"exit {r.returncode}"


def f_scan_project_exclude_beside_code(d):
    root = _proj(d, {"pyproject.toml": '[project]\nname = "x"\ndependencies = ["torch"]\n[tool.mpsready]\n'
                                      'exclude = ["train.py"]\n', "train.py": CUDA_PY, "a.py": "x = 1\n"})
    r = mps("scan", str(root), "--no-cache", "--format", "json")
    verdict = json.loads(r.stdout)["outlook"]["verdict"] if r.stdout else None
    return verdict == "mac_for_dev", f"verdict {verdict} (runs_on_mac: the excluded CUDA file was not read)"


def f_scan_project_ignore_all_codes(d):
    root = _proj(d, {"pyproject.toml": '[project]\nname = "x"\ndependencies = ["torch"]\n[tool.mpsready]\n'
                                      'select = ["INP"]\n', "train.py": CUDA_PY})
    r = mps("scan", str(root), "--no-cache", "--format", "json")
    verdict = json.loads(r.stdout)["outlook"]["verdict"] if r.stdout else None
    return verdict == "mac_for_dev", f"verdict {verdict}"


def f_scan_gitignore_tracked_file(d):
    root = _proj(d, {"train.py": CUDA_PY, "a.py": "x = 1\n", "requirements.txt": "torch\n", ".gitignore": "train.py\n"})
    _git(root, "init", "-q")
    _git(root, "add", "-f", ".")
    r = mps("scan", str(root), "--no-cache", "--format", "json")
    verdict = json.loads(r.stdout)["outlook"]["verdict"] if r.stdout else None
    return verdict == "mac_for_dev", f"verdict {verdict} (train.py is tracked: .gitignore does not apply)"


def f_scan_terminal_ansi_in_finding_text(d):
    root = _proj(d, {"requirements.txt": "flash-attn==2.0 ; sys_platform == 'linux\x1b[2J'\n", "t\x1b]0;x\x07.py": CUDA_PY})
    r = mps("scan", str(root), "--no-cache")
    return r.returncode == 1 and b"\x1b[2J" not in r.stdout and b"\x1b]0" not in r.stdout, f"exit {r.returncode}"


def f_env_head_dev_zero(d):
    root, _m = _repo_with(d, "")
    (root / ".git" / "HEAD").unlink()
    os.symlink("/dev/zero", root / ".git" / "HEAD")
    r = mps("env", "--project", str(root), "--format", "json", timeout=60)
    return r.returncode in (0, 1), f"exit {r.returncode}"


def f_env_gitdir_file_loop(d):
    root = _proj(d, {"a.py": "x\n"})
    (root / ".git").write_text(f"gitdir: {root}\n")
    r = mps("env", "--project", str(root), "--format", "json", timeout=60)
    return r.returncode in (0, 1) and b"Traceback" not in r.stderr, f"exit {r.returncode}"


def f_env_output_planted_link(d):
    victim = _victim(d)
    os.symlink(victim, d / "env.json")
    r = mps("env", "--format", "json", "-o", str(d / "env.json"))
    return victim.read_text() == "theirs", f"exit {r.returncode}"


def f_ops_table_fifo(d):
    os.mkfifo(d / "t.json")
    r = mps("ops", "--table", str(d / "t.json"), "aten::add.Tensor", timeout=60)
    return r.returncode == 2, f"exit {r.returncode}"


def f_ops_table_deep(d):
    (d / "t.json").write_text("{\"a\":" * 100000 + "1" + "}" * 100000)
    r = mps("ops", "--table", str(d / "t.json"), "aten::add.Tensor")
    return r.returncode == 2 and b"Traceback" not in r.stderr, f"exit {r.returncode}"


def f_ops_escape_op_name(d):
    r = mps("ops", "aten::\x1b[2Jadd\u202e.Tensor")
    return r.returncode in (0, 1, 2) and b"\x1b[2J" not in r.stdout + r.stderr \
        and "\u202e".encode() not in r.stdout + r.stderr, f"exit {r.returncode}"


def f_ops_output_planted_link(d):
    victim = _victim(d)
    os.symlink(victim, d / "ops.json")
    r = mps("ops", "--dump-installed", "-o", str(d / "ops.json"))
    return victim.read_text() == "theirs", f"exit {r.returncode}"


def f_trace_from_json_fifo(d):
    os.mkfifo(d / "t.json")
    r = mps("trace", "--from-json", str(d / "t.json"), timeout=60)
    return r.returncode == 2, f"exit {r.returncode}"


def f_trace_from_json_deep(d):
    (d / "t.json").write_text("[" * 200000 + "]" * 200000)
    r = mps("trace", "--from-json", str(d / "t.json"))
    return r.returncode == 2 and b"Traceback" not in r.stderr, f"exit {r.returncode}"


def f_trace_output_planted_link(d):
    victim = _victim(d)
    (d / "e.py").write_text("import torch\ndef step():\n    return torch.ones(2) + 1\n")
    os.symlink(victim, d / "trace.json")
    r = mps("trace", "e.py:step", "--format", "json", "-o", str(d / "trace.json"), cwd=d, timeout=300)
    return victim.read_text() == "theirs", f"exit {r.returncode}"


def f_record_out_is_a_file(d):
    victim = _victim(d)
    r = mps("record", "mod:fn", "--device", "cpu", "--out", str(victim))
    return r.returncode == 2 and victim.read_text() == "theirs", f"exit {r.returncode}"


def f_record_out_nonempty_no_force(d):
    home = _proj(d, {"thesis.tex": "x"})
    r = mps("record", "mod:fn", "--device", "cpu", "--out", str(home))
    return r.returncode == 2 and (home / "thesis.tex").read_text() == "x", f"exit {r.returncode}"


def f_record_entry_os_exit(d):
    (d / "e.py").write_text("import os\ndef step():\n    os._exit(0)\n")
    r = mps("record", "e.py:step", "--device", "cpu", "--steps", "1", "--out", str(d / "rec"), cwd=d, timeout=300)
    try:  # the record may be written, as long as it says the process died (ENV203) and the exit is not 0
        text = (d / "rec" / "record.json").read_text()
    except OSError:
        text = ""
    crashed = '"crashed"' in text or not text
    return r.returncode not in (0, None) and crashed, f"exit {r.returncode}, the record says crashed: {crashed}"


def f_compare_tensor_path_traversal(d):
    secret = d / "secret.bin"
    secret.write_bytes(b"\0" * 64)
    recs = []
    for name in ("a", "b"):
        rec = d / name
        rec.mkdir()
        (rec / "record.json").write_text(json.dumps({
            "schema": {"name": "mpsready.record", "version": 1}, "device": "cpu",
            "steps": [{"step": 0, "tensors": [{"name": "w", "file": "../secret.bin", "dtype": "float32",
                                              "shape": [16]}]}]}))
        recs.append(rec)
    r = mps("compare", str(recs[0]), str(recs[1]))
    return r.returncode == 2, f"exit {r.returncode}"


def f_compare_deep_manifest(d):
    for name in ("a", "b"):
        (d / name).mkdir()
        (d / name / "record.json").write_text("[" * 200000 + "]" * 200000)
    r = mps("compare", str(d / "a"), str(d / "b"))
    return r.returncode == 2 and b"Traceback" not in r.stderr, f"exit {r.returncode}"


def f_compare_config_toml_error(d):
    (d / "pp.toml").write_text("[tool.mpsready.compare\nrtol = \n")
    for name in ("a", "b"):
        (d / name).mkdir()
    r = mps("compare", str(d / "a"), str(d / "b"), "--config", str(d / "pp.toml"))
    return r.returncode == 2 and b"Traceback" not in r.stderr, f"exit {r.returncode}"


def f_report_html_injection(d):
    root = _proj(d, {"<script>alert(1)<\u002fscript>.py": CUDA_PY})
    r = mps("scan", str(root), "--no-cache", "--format", "json", "-o", str(d / "scan.json"))
    out = d / "rep"
    r = mps("report", "--scan", str(d / "scan.json"), "--format", "html", "--out", str(out))
    html = b"".join(p.read_bytes() for p in out.glob("*.html")) if out.exists() else b""
    return bool(html) and b"<script>alert" not in html, f"exit {r.returncode}, {len(html)} html bytes"


def f_report_scan_deep_json(d):
    (d / "scan.json").write_text("{\"a\":" * 100000 + "1" + "}" * 100000)
    r = mps("report", "--scan", str(d / "scan.json"), "--format", "json")
    return r.returncode == 2 and b"Traceback" not in r.stderr, f"exit {r.returncode}"


def f_report_out_is_a_file(d):
    victim = _victim(d)
    root = _proj(d, {"train.py": CUDA_PY})
    mps("scan", str(root), "--no-cache", "--format", "json", "-o", str(d / "scan.json"))
    r = mps("report", "--scan", str(d / "scan.json"), "--format", "md", "--out", str(victim))
    return r.returncode == 2 and victim.read_text() == "theirs", f"exit {r.returncode}"


def f_report_mac_results_traversal(d):
    _tar(d / "results.tar.gz", [("../../escaped.txt", b"x", None), ("results/../../../escaped2.txt", b"x", None)])
    work = d / "w"
    work.mkdir()
    r = mps("report", "--mac-results", str(d / "results.tar.gz"), "--format", "json", cwd=work)
    escaped = list(d.rglob("escaped*.txt")) + list(Path(tempfile.gettempdir()).glob("escaped*.txt"))
    return r.returncode in (1, 2) and not escaped, f"exit {r.returncode}, {len(escaped)} files escaped"


def f_learn_tar_traversal(d):
    _tar(d / "results.tar.gz", [("../escaped.txt", b"x", None), ("/tmp/mpsready-abs-escaped.txt", b"x", None)])
    data = d / "data"
    r = mps("learn", str(d / "results.tar.gz"), env={"MPSREADY_DATA_DIR": str(data)})
    escaped = list(d.rglob("escaped.txt")) + [p for p in [Path("/tmp/mpsready-abs-escaped.txt")] if p.exists()]
    return r.returncode == 2 and not escaped, f"exit {r.returncode}, {len(escaped)} files escaped"


def f_learn_tar_symlink_member(d):
    victim = _victim(d)
    _tar(d / "results.tar.gz", [("results/link", None, str(victim)), ("results/link", b"pwned", None)])
    r = mps("learn", str(d / "results.tar.gz"), env={"MPSREADY_DATA_DIR": str(d / "data")})
    return r.returncode == 2 and victim.read_text() == "theirs", f"exit {r.returncode}"


def f_learn_gzip_bomb(d):
    import gzip

    with gzip.open(d / "results.tar.gz", "wb", compresslevel=9) as fh:  # one 1 GiB member header and zeros
        import tarfile

        info = tarfile.TarInfo("results/observed.json")
        info.size = 1 << 30
        fh.write(info.tobuf())
        chunk = b"\0" * (1 << 20)
        for _ in range(1024):
            fh.write(chunk)
    r = mps("learn", str(d / "results.tar.gz"), env={"MPSREADY_DATA_DIR": str(d / "data")}, timeout=120)
    return r.returncode == 2, f"exit {r.returncode}"


def f_learn_fifo(d):
    os.mkfifo(d / "results.tar.gz")
    r = mps("learn", str(d / "results.tar.gz"), env={"MPSREADY_DATA_DIR": str(d / "data")}, timeout=60)
    return r.returncode == 2, f"exit {r.returncode}"


def f_learn_not_an_archive(d):
    (d / "results.tar.gz").write_bytes(os.urandom(4096))
    r = mps("learn", str(d / "results.tar.gz"), env={"MPSREADY_DATA_DIR": str(d / "data")})
    return r.returncode == 2 and b"Traceback" not in r.stderr, f"exit {r.returncode}"


def f_kit_symlink_out_of_project(d):
    secret = d / "id_rsa"
    secret.write_text("PRIVATE KEY")
    root = _proj(d, {"train.py": "import torch\ndef step():\n    return torch.ones(1)\n"})
    os.symlink(secret, root / "key.py")
    r = mps("kit", str(root), "--entry", "train.py:step", "-o", str(d / "kit"), timeout=300)
    leaked = any(p.is_file() and b"PRIVATE KEY" in p.read_bytes() for p in (d / "kit").rglob("*")) \
        if (d / "kit").exists() else False
    return not leaked, f"exit {r.returncode}, secret copied: {leaked}"


def f_kit_output_nonempty(d):
    home = d / "home"
    home.mkdir()
    (home / "thesis.tex").write_text("x")
    root = _proj(d, {"train.py": "import torch\ndef step():\n    return torch.ones(1)\n"})
    r = mps("kit", str(root), "--entry", "train.py:step", "-o", str(home), timeout=300)
    return (home / "thesis.tex").read_text() == "x" and r.returncode in (0, 2), f"exit {r.returncode}"


def f_kit_approve_not_a_kit(d):
    (d / "k").mkdir()
    r = mps("kit", "--approve", str(d / "k"), "--by", "me", "--rule", "ok")
    return r.returncode == 2 and list((d / "k").iterdir()) == [], f"exit {r.returncode}"


def f_run_output_planted_link(d):
    victim = _victim(d)
    (d / "prog.py").write_text("print(1)\n")
    os.symlink(victim, d / "doc.json")
    r = mps("run", "--format", "json", "-o", str(d / "doc.json"), "--", sys.executable, "prog.py", cwd=d, timeout=300)
    return victim.read_text() == "theirs", f"exit {r.returncode}"


def f_run_ignores_sigterm_past_time_limit(d):
    pid_file = d / "pid"
    (d / "prog.py").write_text(f"import os, signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                               f"open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
                               "while True:\n    try:\n        time.sleep(100)\n    except BaseException:\n        pass\n")
    r = mps("run", "-q", "--time-limit", "3", "--", sys.executable, "prog.py", cwd=d, timeout=200)
    pid = int(pid_file.read_text()) if pid_file.exists() and pid_file.read_text() else None
    return r.returncode is not None and pid is not None and _gone(pid), f"exit {r.returncode}"


def f_run_own_process_group_child(d):
    pid_file = d / "pid"
    (d / "child.py").write_text(f"import os, time\nos.setpgid(0, 0)\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
                                "time.sleep(60)\n")
    (d / "prog.py").write_text(
        "import os, subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, 'child.py'])\n"
        "for _ in range(200):\n"
        f"    if os.path.exists({str(pid_file)!r}) and open({str(pid_file)!r}).read():\n        break\n"
        "    time.sleep(0.05)\n")
    mps("run", "-q", "--", sys.executable, "prog.py", cwd=d, timeout=300)
    pid = int(pid_file.read_text())
    return _gone(pid), "ended" if not _alive(pid) else "survived"


def f_run_program_breaks_json(d):
    (d / "prog.py").write_text("import json, torch\njson.dump = json.dumps = None\n"
                               "torch.ones(2, dtype=torch.float64, device='mps')\n")
    r = mps("run", "--format", "json", "-o", str(d / "doc.json"), "--", sys.executable, "prog.py", cwd=d, timeout=300)
    try:
        doc = json.loads((d / "doc.json").read_text())
    except (OSError, ValueError):
        return False, f"exit {r.returncode}, no document"
    return r.returncode == 1 and doc["outcome"] == "failed", f"exit {r.returncode}, outcome {doc['outcome']}"


def f_run_ansi_in_program_error(d):
    (d / "prog.py").write_text("raise RuntimeError('\\x1b[2J\\u202eboom')\n")
    r = mps("run", "--", sys.executable, "prog.py", cwd=d, timeout=300)
    return r.returncode == 2 and b"\x1b[2J" not in r.stdout and "\u202e".encode() not in r.stdout, \
        f"exit {r.returncode}"


def f_run_fork_process_failure(d):
    (d / "prog.py").write_text(
        "import multiprocessing as mp, sys, torch\n"
        "def work():\n    torch.ones(2, dtype=torch.float64, device='mps')\n"
        "if __name__ == '__main__':\n    p = mp.get_context('fork').Process(target=work)\n"
        "    p.start()\n    p.join()\n    sys.exit(p.exitcode)\n")
    r = mps("run", "--format", "json", "-o", str(d / "doc.json"), "--", sys.executable, "prog.py", cwd=d, timeout=300)
    try:
        doc = json.loads((d / "doc.json").read_text())
    except (OSError, ValueError):
        return False, f"exit {r.returncode}, no document"
    return r.returncode == 1 and doc["outcome"] == "failed", f"exit {r.returncode}, outcome {doc['outcome']}"


def f_run_spawn_pool_mps_use(d):
    (d / "prog.py").write_text(
        "import multiprocessing as mp, torch\n"
        "def work(_):\n    return torch.ones(2, device='mps').sum().item()\n"
        "if __name__ == '__main__':\n    with mp.get_context('spawn').Pool(1) as p:\n        p.map(work, [0])\n")
    r = mps("run", "--format", "json", "-o", str(d / "doc.json"), "--", sys.executable, "prog.py", cwd=d, timeout=300)
    try:
        doc = json.loads((d / "doc.json").read_text())
    except (OSError, ValueError):
        return False, f"exit {r.returncode}, no document"
    return doc["mps_used"] is True, f"mps_used {doc['mps_used']}"


def f_run_forked_worker_terminated(d):
    (d / "prog.py").write_text(
        "import multiprocessing as mp, time, torch\n"
        "def work(_):\n    torch.ones(1, device='mps')\n    time.sleep(30)\n"
        "if __name__ == '__main__':\n    p = mp.get_context('fork').Pool(1)\n"
        "    p.map_async(work, [0])\n    time.sleep(3)\n    p.terminate()\n")
    r = mps("run", "--format", "json", "-o", str(d / "doc.json"), "--", sys.executable, "prog.py", cwd=d, timeout=300)
    return r.returncode == 0 and (d / "doc.json").exists(), f"exit {r.returncode}"


def f_replay_fifo_record(d):
    for name in ("a", "b"):
        (d / name).mkdir()
        os.mkfifo(d / name / "record.json")
    r = mps("replay", str(d / "a"), str(d / "b"), "--layer", "x", timeout=60)
    return r.returncode == 2, f"exit {r.returncode}"


def f_replay_not_records(d):
    victim = _victim(d)
    r = mps("replay", str(victim), str(victim), "--layer", "x")
    return r.returncode == 2 and victim.read_text() == "theirs", f"exit {r.returncode}"


def f_migrate_apply_symlink_out(d):
    outside = d / "outside.py"
    outside.write_text(CUDA_PY)
    root = _proj(d, {"train.py": CUDA_PY})
    os.symlink(outside, root / "linked.py")
    mps("migrate", str(root), "--no-cache", "--apply")
    return outside.read_text() == CUDA_PY, "outside file unchanged" if outside.read_text() == CUDA_PY else "rewritten"


def f_migrate_apply_read_only_file(d):
    root = _proj(d, {"train.py": CUDA_PY})
    os.chmod(root / "train.py", 0o444)
    os.chmod(root, 0o555)
    try:
        r = mps("migrate", str(root), "--no-cache", "--apply")
        same = (root / "train.py").read_text() == CUDA_PY
    finally:
        os.chmod(root, 0o755)
    return (r.returncode == 2 and same) or os.geteuid() == 0, f"exit {r.returncode} (root writes anyway)"


def f_check_out_is_a_file(d):
    victim = _victim(d)
    root = _proj(d, {"train.py": CUDA_PY})
    r = mps("check", str(root), "--skip-record", "--out", str(victim), "-q", timeout=300)
    return r.returncode == 2 and victim.read_text() == "theirs", f"exit {r.returncode}"


def f_check_conftest_not_run(d):
    marker = d / "RAN"
    root = _proj(d, {"train.py": CUDA_PY, "conftest.py": f"open({str(marker)!r}, 'w')\n",
                     "tests/test_a.py": f"open({str(marker)!r}, 'w')\ndef test_a():\n    pass\n"})
    mps("check", str(root), "--skip-record", "--out", str(d / "out"), "-q", timeout=300)
    return not marker.exists(), f"code run: {marker.exists()}"


def f_plugin_sigkill_after_failure(d):
    (d / "test_x.py").write_text("import os, signal, torch\ndef test_a():\n    try:\n"
                                 "        torch.ones(2, dtype=torch.float64, device='mps')\n    except TypeError:\n"
                                 "        pass\n    os.kill(os.getpid(), signal.SIGKILL)\n")
    _pytest(d, "--mps-emulate=2.5", "--mps-json=doc.json")
    try:
        doc = json.loads((d / "doc.json").read_text())
    except (OSError, ValueError):
        return False, "no document"
    return doc["gate"]["failed"] is True, f"gate failed: {doc['gate']['failed']}"


def f_plugin_json_in_missing_folder(d):
    (d / "test_x.py").write_text("def test_a():\n    pass\n")
    r = _pytest(d, "--mps-emulate=2.5", f"--mps-json={d / 'nope' / 'doc.json'}")
    return r.returncode == 4 and b"Traceback" not in r.stderr + r.stdout, f"exit {r.returncode}"


def f_rules_bad_format(d):
    r = mps("rules", "--format", "xml")
    return r.returncode == 2, f"exit {r.returncode}"


FRESH = [
    ("scan", f_scan_setup_py_never_run), ("scan", f_scan_baseline_fifo), ("scan", f_scan_baseline_deep_json),
    ("scan", f_scan_write_baseline_planted_link), ("scan", f_scan_project_exclude_beside_code),
    ("scan", f_scan_project_ignore_all_codes), ("scan", f_scan_gitignore_tracked_file),
    ("scan", f_scan_terminal_ansi_in_finding_text),
    ("env", f_env_head_dev_zero), ("env", f_env_gitdir_file_loop), ("env", f_env_output_planted_link),
    ("ops", f_ops_table_fifo), ("ops", f_ops_table_deep), ("ops", f_ops_escape_op_name),
    ("ops", f_ops_output_planted_link),
    ("trace", f_trace_from_json_fifo), ("trace", f_trace_from_json_deep), ("trace", f_trace_output_planted_link),
    ("record", f_record_out_is_a_file), ("record", f_record_out_nonempty_no_force), ("record", f_record_entry_os_exit),
    ("compare", f_compare_tensor_path_traversal), ("compare", f_compare_deep_manifest),
    ("compare", f_compare_config_toml_error),
    ("report", f_report_html_injection), ("report", f_report_scan_deep_json), ("report", f_report_out_is_a_file),
    ("report", f_report_mac_results_traversal),
    ("learn", f_learn_tar_traversal), ("learn", f_learn_tar_symlink_member), ("learn", f_learn_gzip_bomb),
    ("learn", f_learn_fifo), ("learn", f_learn_not_an_archive),
    ("kit", f_kit_symlink_out_of_project), ("kit", f_kit_output_nonempty), ("kit", f_kit_approve_not_a_kit),
    ("run", f_run_output_planted_link), ("run", f_run_ignores_sigterm_past_time_limit),
    ("run", f_run_own_process_group_child), ("run", f_run_program_breaks_json), ("run", f_run_ansi_in_program_error),
    ("run", f_run_fork_process_failure), ("run", f_run_spawn_pool_mps_use), ("run", f_run_forked_worker_terminated),
    ("replay", f_replay_fifo_record), ("replay", f_replay_not_records),
    ("migrate", f_migrate_apply_symlink_out), ("migrate", f_migrate_apply_read_only_file),
    ("check", f_check_out_is_a_file), ("check", f_check_conftest_not_run),
    ("pytest plugin", f_plugin_sigkill_after_failure), ("pytest plugin", f_plugin_json_in_missing_folder),
    ("rules", f_rules_bad_format),
]


def g_env_diff_fifo(d):
    os.mkfifo(d / "a.json")
    (d / "b.json").write_text("{}")
    r = mps("env", "--diff", str(d / "a.json"), str(d / "b.json"), timeout=60)
    return r.returncode == 2, f"exit {r.returncode}"


def g_env_diff_huge_number(d):
    for name in ("a", "b"):
        (d / f"{name}.json").write_text('{"schema": {"name": "mpsready.env", "version": 1}, "python": {"version": '
                                        + "9" * 5000 + "}}")
    r = mps("env", "--diff", str(d / "a.json"), str(d / "b.json"))
    return r.returncode == 2 and b"Traceback" not in r.stderr, f"exit {r.returncode}"


def g_env_project_index_bomb(d):
    root, _m = _repo_with(d, "")
    idx = root / ".git" / "index"
    data = idx.read_bytes()
    idx.write_bytes(data[:8] + (0xFFFFFFF).to_bytes(4, "big") + data[12:])  # claims 268 million entries
    r = mps("env", "--project", str(root), "--format", "json", timeout=60)
    return r.returncode in (0, 1), f"exit {r.returncode}"


def g_compare_label_control_chars(d):
    for name in ("a", "b"):
        (d / name).mkdir()
    r = mps("compare", str(d / "a"), str(d / "b"), "--label", "x\x1b[2J\u202e")
    return r.returncode == 2 and b"\x1b[2J" not in r.stdout + r.stderr, f"exit {r.returncode}"


def g_compare_plots_into_file(d):
    victim = _victim(d)
    for name in ("a", "b"):
        (d / name).mkdir()
    r = mps("compare", str(d / "a"), str(d / "b"), "--plots", str(victim))
    return r.returncode == 2 and victim.read_text() == "theirs", f"exit {r.returncode}"


def g_compare_same_record_twice_symlink_loop(d):
    os.symlink(d / "loop", d / "loop")
    r = mps("compare", str(d / "loop"), str(d / "loop"), timeout=60)
    return r.returncode == 2, f"exit {r.returncode}"


def g_trace_entry_missing_file(d):
    r = mps("trace", str(d / "nope.py") + ":step")
    return r.returncode == 2 and b"Traceback" not in r.stderr, f"exit {r.returncode}"


def g_trace_project_outside_entry(d):
    marker = d / "RAN"
    (d / "evil.py").write_text(f"open({str(marker)!r}, 'w')\ndef step():\n    pass\n")
    proj = _proj(d, {"a.py": "x = 1\n"})
    r = mps("trace", "../evil.py:step", "--project", str(proj), cwd=proj, timeout=300)
    return r.returncode == 2 and not marker.exists(), f"exit {r.returncode}, code run: {marker.exists()}"


def g_migrate_cwd_symlink_out(d):
    root = _proj(d, {"train.py": "open('RAN', 'w')\n"})
    os.symlink(d, root / "up")
    r = mps("migrate", str(root), "--no-cache", "--verify", "--cwd", "up", "--", sys.executable,
            str(root / "train.py"))
    return r.returncode == 2 and not (d / "RAN").exists(), f"exit {r.returncode}"


def g_migrate_cache_dir_is_a_file(d):
    victim = _victim(d)
    root = _proj(d, {"train.py": CUDA_PY})
    r = mps("migrate", str(root), "--cache-dir", str(victim), "-q")
    return r.returncode in (0, 1, 2) and victim.read_text() == "theirs" and b"Traceback" not in r.stderr, \
        f"exit {r.returncode}"


def g_migrate_notebook_bad_json_apply(d):
    root = _proj(d, {"nb.ipynb": '{"cells": [{"cell_type": "code", "source": "import torch\\nx = torch.ones(1).cuda()"',
                     "train.py": CUDA_PY})
    before = (root / "nb.ipynb").read_bytes()
    r = mps("migrate", str(root), "--no-cache", "--apply")
    return r.returncode in (0, 1) and (root / "nb.ipynb").read_bytes() == before, f"exit {r.returncode}"


def g_scan_notebook_huge_output_cell(d):
    cell = {"cell_type": "code", "source": "import torch\nx = torch.ones(1).cuda()\n", "metadata": {},
            "outputs": [{"output_type": "stream", "name": "stdout", "text": "A" * 3_000_000}], "execution_count": 1}
    root = _proj(d, {"nb.ipynb": json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})})
    r = mps("scan", str(root), "--no-cache", "--format", "json")
    return r.returncode == 1, f"exit {r.returncode}"


def g_scan_requirements_include_loop_and_outside(d):
    (d / "secret.txt").write_text("flash-attn\n")
    root = _proj(d, {"requirements.txt": "-r requirements.txt\n-r ../secret.txt\n-r /dev/zero\ntorch\n"})
    r = mps("scan", str(root), "--no-cache", "--format", "json", timeout=60)
    return r.returncode in (0, 1) and b"flash" not in r.stdout, f"exit {r.returncode}"


def g_scan_cache_dir_symlink_to_other(d):
    root = _proj(d, {"train.py": CUDA_PY})
    other = d / "other"
    other.mkdir()
    os.symlink(other, d / "cache")
    r = mps("scan", str(root), "--cache-dir", str(d / "cache"), "-q")
    return r.returncode == 1, f"exit {r.returncode}"


def g_scan_project_per_file_ignores_all(d):
    root = _proj(d, {"pyproject.toml": '[project]\nname = "x"\ndependencies = ["torch"]\n[tool.mpsready]\n'
                                      'per-file-ignores = {"*" = ["API", "DEP", "EXT", "DTY", "OPS"]}\n',
                     "train.py": CUDA_PY})
    r = mps("scan", str(root), "--no-cache", "-q")
    return r.returncode == 1, f"exit {r.returncode} (0: the project's own filter passed the gate on CUDA code)"


def g_report_tests_doc_lies_gate(d):
    doc = {"schema": {"name": "mpsready.pytest", "version": 1}, "gate": {"failed": False},
           "tests": [{"nodeid": "t::a", "outcome": "failed", "mac": {"verdict": "fails"}}]}
    (d / "t.json").write_text(json.dumps(doc))
    r = mps("report", "--tests", str(d / "t.json"), "--format", "json")
    return r.returncode in (1, 2), f"exit {r.returncode}"


def g_run_module_shadowing_mpsready(d):
    marker = d / "RAN"
    (d / "mpsready").mkdir()
    (d / "mpsready" / "__init__.py").write_text(f"open({str(marker)!r}, 'w')\n")
    (d / "json.py").write_text(f"open({str(marker)!r}, 'w')\n")
    (d / "prog.py").write_text("print('hi')\n")
    work = d / "w"  # not d: `python -m mpsready` in d would import d/mpsready by Python's own rule, not mpsready's
    work.mkdir()
    r = mps("run", "-q", "--", sys.executable, str(d / "prog.py"), cwd=work, timeout=300)
    return r.returncode == 0 and not marker.exists(), f"exit {r.returncode}, shadow run: {marker.exists()}"


def g_kit_entry_outside_project(d):
    marker = d / "RAN"
    (d / "evil.py").write_text(f"open({str(marker)!r}, 'w')\ndef step():\n    pass\n")
    root = _proj(d, {"train.py": "x = 1\n"})
    r = mps("kit", str(root), "--entry", "../evil.py:step", "-o", str(d / "kit"), timeout=300)
    return r.returncode == 2 and not marker.exists(), f"exit {r.returncode}, code run: {marker.exists()}"


FRESH2 = [
    ("env", g_env_diff_fifo), ("env", g_env_diff_huge_number), ("env", g_env_project_index_bomb),
    ("compare", g_compare_label_control_chars), ("compare", g_compare_plots_into_file),
    ("compare", g_compare_same_record_twice_symlink_loop),
    ("trace", g_trace_entry_missing_file),  # g_trace_project_outside_entry: by design (an ENTRY outside --project)
    ("migrate", g_migrate_cwd_symlink_out), ("migrate", g_migrate_cache_dir_is_a_file),
    ("migrate", g_migrate_notebook_bad_json_apply),
    ("scan", g_scan_notebook_huge_output_cell), ("scan", g_scan_requirements_include_loop_and_outside),
    ("scan", g_scan_cache_dir_symlink_to_other), ("scan", g_scan_project_per_file_ignores_all),
    ("report", g_report_tests_doc_lies_gate), ("run", g_run_module_shadowing_mpsready),
    ("kit", g_kit_entry_outside_project),
]
FRESH += FRESH2


def run_attacks(only: set[str] | None, attacks: list | None = None) -> int:
    """Run ``attacks`` (default :data:`ATTACKS`; those of the commands in ``only``); one line each, then the
    table."""
    table: dict[str, list[int]] = {}
    for command, attack in (ATTACKS if attacks is None else attacks):
        if only and command not in only:
            continue
        with tempfile.TemporaryDirectory(prefix="mpsready-attack-") as tmp:
            try:
                ok, detail = attack(Path(tmp))
            except Exception as exc:  # the attack's set-up or the command broke: a failure, said so
                ok, detail = False, f"{type(exc).__name__}: {str(exc)[:120]}"
        row = table.setdefault(command, [0, 0, 0])
        row[0] += 1
        row[1 if ok else 2] += 1
        print(f"{'survived' if ok else 'FAILED  '}  {command:<14} {attack.__name__[2:]:<38} {detail}", flush=True)
    print(f"\n{'command':<14}{'tried':>7}{'survived':>10}{'failed':>8}")
    total = [0, 0, 0]
    for command, row in table.items():
        print(f"{command:<14}{row[0]:>7}{row[1]:>10}{row[2]:>8}")
        total = [t + r for t, r in zip(total, row)]
    share = f"{100 * total[1] / total[0]:.0f} %" if total[0] else "n/a"
    print(f"{'all':<14}{total[0]:>7}{total[1]:>10}{total[2]:>8}   survived {share}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--attacks", action="store_true", help="run the attack round of issue 34 instead")
    ap.add_argument("--only", default=None, help="with --attacks: the commands whose attacks to run")
    ap.add_argument("--fresh", action="store_true", help="with --attacks: round 5's fresh attacks only (FRESH)")
    ap.add_argument("--fresh2", action="store_true", help="with --attacks: round 5's second batch only (FRESH2)")
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--sizes", default="0.1,1,4", help="MB, comma-separated (the first is the ratios' base)")
    ap.add_argument("--repeat", type=int, default=3, help="scans per size; the least CPU time is kept")
    args = ap.parse_args()
    if args.attacks:
        return run_attacks(set(args.only.split(",")) if args.only else None,
                           FRESH2 if args.fresh2 else FRESH if args.fresh else ATTACKS + FRESH)
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
