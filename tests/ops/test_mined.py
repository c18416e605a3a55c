"""The mined knowledge base (issue 33 item 1): the harvester's reading of a binary, the miner's reading of its
messages, the shipped mined facts, and the curated tables held to the releases whose binaries print their text."""
from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from mpsready.ops import mined
from mpsready.ops.build import curated, facts, harvest

DATA = Path(__file__).parent / "data" / "facts"


def test_binary_messages_keep_mps_messages_once_in_order():
    blob = (b"\x00\x01_ZN2at3mps2geERKNS_6TensorE\x00MPS does not support cumsum op with int64 input\x00"
            b"plain text without the backend word\x00-[FakeMPSGraph scalingMode]\x00"
            b'*x INTERNAL ASSERT FAILED at "/Users/r/pytorch/build/aten/src/ATen/RegisterMPS.cpp":12, bug\x00'
            b"The MPS backend is supported on MacOS 14.0+.\x00MPS does not support cumsum op with int64 input\x00")
    assert harvest.binary_messages(blob) == ["MPS does not support cumsum op with int64 input",
                                             "The MPS backend is supported on MacOS 14.0+."]


@pytest.mark.parametrize("text,want", [
    ("scatter_reduce(amin/amax) on int64 requires macOS 15 or newer", ("macos", ["int64"], "15.0")),
    ("Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support float64. Please use float32 "
     "instead.", ("dtype", ["float64"], None)),
    ("MPS supports tensors with dimensions <= 16, but got ", ("rank", [], None)),
    ("Output channels > 65536 not supported at the MPS device. ", ("size", [], None)),
    ("add: expected 'self' to be MPS, but got ", ("placement", [], None)),
])
def test_message_facts(text, want):
    assert facts.message_facts(text) == want


def test_binary_messages_become_facts_tied_to_the_ops_they_name(tmp_path):
    rel = tmp_path / "2.5.1"
    shutil.copytree(DATA / "2.5.1", rel)
    (rel / facts.BINARY_STRINGS).write_text("MPS does not support cumsum op with int64 input\n"
                                            "There are no MPS operations logged for profiling\n"
                                            "MPS supports tensors with dimensions <= 16, but got \n")
    (rel / facts.WHEEL_MANIFEST).write_text(json.dumps({"wheel": "torch-2.5.1-x.whl", "sha256": "ab",
                                                        "git_version": "cd"}))
    doc = facts.mine_release(rel, "2.5.1")
    got = [(f["kind"], f["ops"], f["dtypes"], f["message"], f["source"]) for f in doc["facts"]
           if f["condition"] == "message present in the release's binary"]
    where = "torch/lib/libtorch_cpu.dylib of torch-2.5.1-x.whl"
    assert got == [("dtype", ["cumsum", "cumsum.out"], ["int64"], "MPS does not support cumsum op with int64 input",
                    f"{where} (string 1 of {facts.BINARY_STRINGS}) @ 2.5.1"),
                   ("rank", [], [], "MPS supports tensors with dimensions <= 16, but got",
                    f"{where} (string 3 of {facts.BINARY_STRINGS}) @ 2.5.1")]
    assert doc["wheel"] == {"wheel": "torch-2.5.1-x.whl", "sha256": "ab", "git_version": "cd"}
    assert doc["coverage"]["binary_messages"] == 2 and doc["coverage"]["overloads_with_a_binary_message"] == 2
    out = tmp_path / "m.json.gz"
    assert facts.main(["--sources", str(tmp_path), "--merged", str(out)]) == 0
    merged = json.loads(gzip.decompress(out.read_bytes()))
    assert merged["releases"] == ["2.5.1"] and merged["messages"][0]["releases"] == ["2.5.1"]
    assert merged["messages"][0]["source"] == where


def test_release_folders_are_ordered_by_version_and_must_be_versions(tmp_path, capsys):
    for name in ("2.10.0", "2.9.1"):
        shutil.copytree(DATA / "2.5.1", tmp_path / name)
    assert facts.main(["--sources", str(tmp_path)]) == 0
    rows = [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:]]
    assert rows == ["2.9.1", "2.10.0"]
    shutil.copytree(DATA / "2.5.1", tmp_path / "latest")
    assert facts.main(["--sources", str(tmp_path)]) == 2
    assert "not named by its version" in capsys.readouterr().err


def test_shipped_mined_facts_cover_every_release_with_their_wheels():
    doc = mined.load()
    assert doc["schema"] == {"name": "mpsready.ops-mined", "version": 1}
    assert doc["releases"][0] == "2.2.2" and doc["releases"][-1] == "2.14.1" and len(doc["releases"]) == 20
    assert doc["wheels"]["2.2.2"]["git_version"] == "39901f229520a5256505ec24782f716ee7ddc843"
    assert doc["wheels"]["2.13.0"]["git_version"] == "cf30153c4c131c8164ee7798e5022d810682e2cb"
    assert mined.releases_printing("MPS does not support sigmoid op with int64 input") == [
        "2.2.2", "2.3.0", "2.3.1", "2.4.0", "2.4.1", "2.5.0", "2.5.1", "2.6.0", "2.7.0", "2.7.1"]
    assert mined.releases_printing("linalg.matrix_exp on MPS requires macOS 15.0 or newer") == ["2.14.0", "2.14.1"]
    assert mined.releases_printing("no such message in any release of PyTorch") == []


def _read_from_mined(entry):
    return "data/mined/mps_facts.json.gz" in str(entry.get("range", "")) and str(entry["range"]).startswith("read")


def _curated_messages():
    checks = curated.load("mps_dtype_checks")
    for kind in ("dtype_checks", "call_checks"):
        for e in checks[kind]:
            yield kind, e
    for e in curated.load("mps_availability")["releases"]:
        yield "availability", e


def test_curated_ranges_read_in_the_binaries_are_exactly_the_releases_printing_the_message():
    """Every curated entry whose range says it was read in the mined binaries names exactly those releases."""
    rels = mined.load()["releases"]
    checked = 0
    for kind, e in _curated_messages():
        if not _read_from_mined(e):
            continue
        want = [r for r in rels if Version(r) in SpecifierSet(e["torch"])]
        # a message with sizes filled in at run time names its constant first piece as ``mined_message``
        printing = mined.releases_printing(e.get("mined_message", e["message"]))
        assert [r for r in printing if r in want] == want, (kind, e["message"])
        checked += 1
    assert checked == 12
