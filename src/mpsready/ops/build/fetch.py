"""Fetch the few files the builder needs out of one PyTorch wheel (maintainers only, never at run time).

For a release V, ``pip download torch==V`` (smallest wheel first: macOS arm64 wheels are 61-111 MB, the
Linux CPU wheel about 190 MB; native_functions.yaml is byte-identical across platforms, research note
§0/§1), records the wheel's sha256 and file name, extracts only the members in ``MEMBERS`` into
``<cache>/<V>/`` and deletes the wheel. Wheels of 2.12+ are tagged ``macosx_14_0_arm64`` (research note §2.1).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

# Members read from a wheel; the last one exists only in wheels >= 2.8 (research note §3).
MEMBERS = (
    "torchgen/packaged/ATen/native/native_functions.yaml",
    "torch/version.py",
    "torch/backends/mps/__init__.py",
    "torch/testing/_internal/common_mps.py",
)
# Platform tags tried in order (smallest wheels first).
PLATFORMS = ("macosx_14_0_arm64", "macosx_11_0_arm64", "manylinux_2_28_x86_64")
MANIFEST = "wheel.json"


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def extract(wheel: Path, dest: Path) -> dict:
    """Copy ``MEMBERS`` present in ``wheel`` to ``dest`` and write ``wheel.json`` (name, sha256, size, members)."""
    dest.mkdir(parents=True, exist_ok=True)
    found = []
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        for member in MEMBERS:
            if member in names:
                out = dest / member
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(zf.read(member))
                found.append(member)
    info = {"wheel": wheel.name, "sha256": sha256_of(wheel), "size": wheel.stat().st_size, "members": found}
    (dest / MANIFEST).write_text(json.dumps(info, indent=1) + "\n")
    return info


def download(version: str, tmp: Path, platforms: tuple[str, ...] = PLATFORMS) -> Path:
    """``pip download`` the first of ``platforms`` that has ``torch==version``; returns the wheel path."""
    errors = []
    for plat in platforms:
        cmd = [sys.executable, "-m", "pip", "download", f"torch=={version}", "--no-deps", "--only-binary=:all:",
               "--platform", plat, "--python-version", "3.11", "-d", str(tmp), "-q"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wheels = sorted(tmp.glob(f"torch-{version}*.whl"))
        if proc.returncode == 0 and wheels:
            return wheels[0]
        errors.append(f"{plat}: {proc.stderr.strip()[-300:]}")
    raise RuntimeError(f"cannot download torch=={version}:\n" + "\n".join(errors))


def fetch(version: str, cache: Path, local_wheels: tuple[Path, ...] = (Path("/opt/wheels"),)) -> dict:
    """Make ``<cache>/<version>/`` hold the members and manifest; reuses a finished cache entry."""
    dest = cache / version
    if (dest / MANIFEST).exists():
        return json.loads((dest / MANIFEST).read_text())
    for folder in local_wheels:  # a wheel already on disk (not deleted: it is not ours)
        for wheel in sorted(folder.glob(f"torch-{version}[+-]*.whl")):
            return extract(wheel, dest)
    with tempfile.TemporaryDirectory(prefix="mpsready-wheel-") as tmp:
        wheel = download(version, Path(tmp))
        return extract(wheel, dest)  # the temporary directory (and the wheel) is deleted on exit


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("versions", nargs="+")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/mpsready-torch-files"))
    args = ap.parse_args(argv)
    rc = 0
    for version in args.versions:
        try:
            info = fetch(version, args.cache)
            print(f"{version}: {info['wheel']} sha256={info['sha256'][:12]} members={len(info['members'])}", flush=True)
        except Exception as exc:  # keep going: report which releases are missing
            print(f"{version}: FAILED {exc}", flush=True)
            rc = 1
    return rc


if __name__ == "__main__":
    raise SystemExit(main())
