"""Evidence lines of checklist item 8 (:func:`mpsready.report.checklist.item_data`): what would leave the lab
(from the manifest of the kit that ran) and the facts about mpsready's own outputs, shown, never a pass."""

from __future__ import annotations

from collections import Counter

from mpsready.findings import Basis
from mpsready.report.checkitem import EvidenceLine, name_list
from mpsready.report.evidence import Evidence


def data_facts(ev: Evidence) -> list[EvidenceLine]:
    """Whether the run records hold raw tensors (observed in each record), and what the other outputs hold."""
    saved, kept = "saved (--save-tensors): they hold data", "not saved (statistics and checksums only)"
    lines = [EvidenceLine("record", f"{r.device}: raw tensors {saved if r.raw_tensors else kept}", Basis.OBSERVED,
                          source=r.source) for r in ev.records]
    if ev.stages_present():
        lines.append(EvidenceLine("note", "scan, env and trace outputs hold no raw data by construction: a fact about "
                                  "mpsready's outputs, not a confirmation of the lab's rules", None))
    return lines


def kit_lines(mac) -> list[EvidenceLine]:
    """What the kit that ran took out of the lab, and what it left home (its manifest)."""
    doc = mac.kit if isinstance(mac.kit, dict) else {}
    files = [f for f in doc.get("files") or [] if isinstance(f, dict)]
    project = sorted(str(f.get("path"))[len("project/"):] for f in files if str(f.get("path")).startswith("project/"))
    size = sum(int(f.get("bytes") or 0) for f in files if str(f.get("path")).startswith("project/"))
    src = f"{mac.source}:results/manifest.json" if mac.ran else f"{mac.source}/manifest.json"
    verb = "left the lab" if mac.ran else "would leave the lab"
    out = [EvidenceLine("note", f"{verb}: {len(project)} project file(s), {size} bytes ({name_list(project, 6)}), "
                        f"plus mpsready itself and the run script", None, source=src)]
    inputs = doc.get("inputs")
    if isinstance(inputs, dict):
        out.append(EvidenceLine("note", f"{verb}: the shapes, dtypes and value ranges of {inputs.get('tensors')} "
                                f"input tensor(s) from {inputs.get('from')} (no values)", None, source=src))
    left = [x for x in doc.get("left_out") or [] if isinstance(x, dict)]
    if left:
        why = Counter(str(x.get("reason")) for x in left)
        out.append(EvidenceLine("note", f"stayed home: {len(left)} path(s) ("
                                + ", ".join(f"{n} {r}" for r, n in sorted(why.items())) + "): "
                                + name_list([str(x.get("path")) for x in left], 6), None, source=src))
    if not mac.ran:
        return out
    out.append(EvidenceLine("note", "came back: results.tar.gz (env and run records with statistics, test outcomes "
                            "with their first error lines, the last 20,000 characters of each command's output)",
                            None, source=mac.source))
    return out


def install_lines(ev: Evidence) -> tuple[list[str], list[EvidenceLine]]:
    """The installs a kit observed on a Mac (``--mac-results``): the requirements that failed, and one line per
    install step. Nothing from a dry run or from results not made on macOS."""
    mac = ev.mac
    if mac is None or not mac.on_mac:
        return [], []
    failed, lines = [], []
    for step in mac.installs():
        if step.skipped:
            continue
        what = step.name[len("install "):] if step.name.startswith("install ") else step.name
        lines.append(EvidenceLine("stage", f"pip install {what} on {mac.where}: {step.state()}", Basis.OBSERVED,
                                  source=mac.source))
        if not step.ok:
            failed.append(what)
    return failed, lines
