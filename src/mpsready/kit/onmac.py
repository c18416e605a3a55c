"""``python -m mpsready.kit.onmac check|pack KIT RESULTS``: the first and last step of ``run-on-mac.sh``
(standard library only).

``check`` compares the kit with its manifest before anything runs (:func:`mpsready.kit.manifest.check`) and
writes ``RESULTS/kit-check.json``: the manifest hash, the sign-off found, files changed, missing or added. It
also copies ``manifest.json`` and ``APPROVAL.json`` (when present) into the results, so home knows which kit ran.

``pack`` writes ``RESULTS/run.json`` (schema ``mpsready.kit.results`` v1: the device, whether it was a dry run,
each step from ``steps.jsonl``), cuts every log to its last :data:`LOG_TAIL` characters, and packs the results
folder into ``KIT/results.tar.gz`` with :mod:`tarfile` (regular files and folders only).
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import sys
import tarfile

from mpsready.kit import manifest

RESULTS_SCHEMA = "mpsready.kit.results"
LOG_TAIL = 20000
ARCHIVE = "results.tar.gz"


def check(kit: str, results: str) -> int:
    state = manifest.check(kit)
    os.makedirs(results, exist_ok=True)
    with open(os.path.join(results, "kit-check.json"), "w", encoding="utf-8") as fh:
        json.dump(state.to_dict(), fh, indent=2)
    for name in (manifest.MANIFEST_JSON, manifest.APPROVAL):
        if os.path.isfile(os.path.join(kit, name)):
            shutil.copyfile(os.path.join(kit, name), os.path.join(results, name))
    if not state.signed:
        why = "no sign-off" if not state.approval else "the kit differs from what was signed off"
        print(f"mpsready kit: note: {why}; item 8 of the report will read 'not checked'", file=sys.stderr)
    return 0


def _steps(results: str) -> list[dict]:
    out = []
    try:
        with open(os.path.join(results, "steps.jsonl"), encoding="utf-8") as fh:
            for line in fh:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    continue
    except OSError:
        pass
    return out


def _cut_logs(results: str) -> None:
    logs = os.path.join(results, "logs")
    if not os.path.isdir(logs):
        return
    for name in os.listdir(logs):
        path = os.path.join(logs, name)
        if os.path.isfile(path) and os.path.getsize(path) > LOG_TAIL:
            with open(path, "rb") as fh:
                fh.seek(-LOG_TAIL, os.SEEK_END)
                tail = fh.read()
            with open(path, "wb") as fh:
                fh.write(b"[... cut: the last %d bytes kept]\n" % LOG_TAIL + tail)


def pack(kit: str, results: str) -> int:
    from mpsready.schema import envelope

    kit_doc = manifest.read_json(os.path.join(kit, manifest.MANIFEST_JSON)) or {}
    device = os.environ.get("MPSREADY_KIT_DEVICE") or kit_doc.get("device")
    doc = envelope(RESULTS_SCHEMA, 1, basis="observed", device=device, kit_device=kit_doc.get("device"),
                   dry_run=bool(device and device != kit_doc.get("device")),
                   machine=platform.node() or None, system=platform.system(), release=platform.release(),
                   mac_ver=platform.mac_ver()[0] or None, python_used=os.environ.get("MPSREADY_KIT_PYTHON") or None,
                   steps=_steps(results))
    with open(os.path.join(results, "run.json"), "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=2)
    _cut_logs(results)
    target = os.path.join(kit, ARCHIVE)
    tmp = target + ".partial"
    with tarfile.open(tmp, "w:gz") as tar:
        tar.add(results, arcname="results", filter=_regular)
    os.replace(tmp, target)
    print(f"mpsready kit: results: {target}", file=sys.stderr)
    return 0


def _regular(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    if not (info.isfile() or info.isdir()):
        return None
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[0] not in ("check", "pack"):
        print("usage: python -m mpsready.kit.onmac check|pack KIT RESULTS", file=sys.stderr)
        return 2
    return check(argv[1], argv[2]) if argv[0] == "check" else pack(argv[1], argv[2])


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
