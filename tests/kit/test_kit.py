"""mpsready kit: the code only goes into the kit, each file left out is listed with its reason, the manifest
lists every kit file with size and sha256, and a sign-off holds only while the kit matches it."""

import hashlib
import json
import shutil
import subprocess
import tarfile

import pytest

from mpsready.cli import main
from mpsready.kit import manifest
from mpsready.kit.select import select
from tests.kit.fake_mac import project


def test_select_keeps_code_and_names_why_each_other_file_stays_home(tmp_path):
    sel = select(project(tmp_path / "proj"))
    assert [f.relpath for f in sel.files] == ["README.md", "model/__init__.py", "model/net.py", "requirements.txt",
                                              "step.py"]
    assert [(x.relpath, x.reason, x.files) for x in sel.left_out] == [
        (".env", "credentials", 1), (".gitignore", "not code", 1), ("data/", "data folder", 2), ("explore.ipynb", "notebook", 1),
        ("model.ckpt", "data extension", 1), ("results.csv", "data extension", 1), ("train.log", ".gitignore", 1)]
    assert sel.left_out[2].to_dict() == {"path": "data/", "reason": "data folder", "files": 2, "bytes": 72,
                                         "detail": "a folder named 'data' holds data, checkpoints or outputs"}


def test_select_leaves_out_links_big_files_and_tool_folders(tmp_path):
    root = tmp_path / "p"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref\n")
    (root / "big.py").write_text("x = 1\n" * 200000)
    (root / "link.py").symlink_to("/etc/hostname")
    (root / "ok.py").write_text("x = 1\n")
    sel = select(root)
    assert [f.relpath for f in sel.files] == ["ok.py"]
    assert [(x.relpath, x.reason) for x in sel.left_out] == [(".git/", "tool folder"), ("big.py", "size"),
                                                              ("link.py", "link")]


def _build(tmp_path, *extra):
    proj = project(tmp_path / "proj")
    out = tmp_path / "kit"
    assert main(["kit", str(proj), "--entry", "step.py:step", "-o", str(out), "--torch", "2.5.1", *extra]) == 0
    return proj, out


def test_kit_folder_archive_and_manifest(tmp_path, monkeypatch):
    def no_git(*a, **k):  # the kit never runs git (or anything else) in the project
        raise AssertionError(f"subprocess started: {a}")

    monkeypatch.setattr(subprocess, "Popen", no_git)
    proj, out = _build(tmp_path)
    doc = json.loads((out / "manifest.json").read_text())
    paths = [f["path"] for f in doc["files"]]
    assert [p for p in paths if p.startswith("project/")] == [
        "project/README.md", "project/model/__init__.py", "project/model/net.py",
        "project/requirements.txt", "project/step.py"]
    assert {"run-on-mac.sh", "deps.txt", "constraints.txt", "tool/requirements.txt",
            "tool/mpsready/kit/bounded.py"} <= set(paths)
    assert not any("examples/" in p or "__pycache__" in p for p in paths)
    net = next(f for f in doc["files"] if f["path"] == "project/model/net.py")
    data = (proj / "model" / "net.py").read_bytes()
    assert net == {"path": "project/model/net.py", "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    assert [x["path"] for x in doc["left_out"]] == [".env", ".gitignore", "data/", "explore.ipynb", "model.ckpt", "results.csv",
                                                    "train.log"]
    assert (doc["device"], doc["entry"], doc["torch"]) == ("mps", "step.py:step", "torch==2.5.1")
    assert doc["commands"][1] == "$PY -m pip install torch==2.5.1"
    assert (out / "deps.txt").read_text() == "numpy>=1.24\n"  # torch is the kit's own release; -e . skipped
    assert (out / "constraints.txt").read_text() == "torch==2.5.1\n"
    md = (out / "MANIFEST.md").read_text().splitlines()
    assert md[0] == manifest.UNSIGNED_LINE
    assert "| `data/ (2 files)` | data folder | a folder named 'data' holds data, checkpoints or outputs |" in md
    with tarfile.open(tmp_path / "kit.tar.gz") as tar:
        names = tar.getnames()
    assert "kit/project/step.py" in names and "kit/manifest.json" in names
    assert not any(n.startswith("kit/project/data") or n.endswith((".ckpt", ".csv", ".env")) for n in names)


def test_approve_signs_the_manifest_and_a_change_breaks_it(tmp_path, capsys):
    _, out = _build(tmp_path)
    digest = manifest.sha256_file(out / "manifest.json")
    assert not manifest.check(str(out)).signed
    assert main(["kit", "--approve", str(out), "--by", "Dr. Ada", "--rule", "lab policy 4.2: code only"]) == 0
    approval = json.loads((out / "APPROVAL.json").read_text())
    assert (approval["by"], approval["rule"], approval["manifest_sha256"]) == ("Dr. Ada", "lab policy 4.2: code only",
                                                                               digest)
    assert approval["when"].endswith("Z")
    first = (out / "MANIFEST.md").read_text().splitlines()[0]
    assert first == (f"SIGNED OFF by Dr. Ada on {approval['when']} under the rule: lab policy 4.2: code only "
                     f"(manifest sha256 {digest})")
    assert manifest.check(str(out)).signed
    (out / "project" / "step.py").write_text("print('changed')\n")
    state = manifest.check(str(out))
    assert (state.signed, state.changed) == (False, ["project/step.py"])
    (out / "project" / "extra.py").write_text("")
    (out / "project" / "__pycache__").mkdir()  # left by running the code: not a change to the kit
    (out / "project" / "__pycache__" / "step.cpython-311.pyc").write_bytes(b"x")
    assert manifest.check(str(out)).added == ["project/extra.py"]
    capsys.readouterr()
    assert main(["kit", "--approve", str(out), "--by", "x", "--rule", "y"]) == 2  # nobody signs a changed kit
    assert "no longer matches its manifest" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["kit", "PROJ", "--entry", "nope.py:step", "-o", "OUT"], "--entry file nope.py is not among the project's code"),
    (["kit", "PROJ", "--entry", "step", "-o", "OUT"], "--entry must look like"),
    (["kit", "PROJ", "--entry", "step.py:step"], "give PATH, --entry ENTRY and -o DIR"),
    (["kit", "--approve", "OUT", "--by", "x"], "--approve needs --by NAME and --rule TEXT"),
    (["kit", "PROJ", "--entry", "step.py:step", "-o", "OUT", "--torch", "latest"], "--torch must be a PyTorch release"),
])
def test_bad_input_exits_2_and_writes_nothing(tmp_path, capsys, argv, message):
    proj = project(tmp_path / "proj")
    argv = [a.replace("PROJ", str(proj)).replace("OUT", str(tmp_path / "out")) for a in argv]
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists() and not (tmp_path / "out.tar.gz").exists()


def test_kit_refuses_a_non_empty_output_folder_or_an_archive_in_the_way(tmp_path, capsys):
    proj = project(tmp_path / "proj")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("mine")
    assert main(["kit", str(proj), "--entry", "step.py:step", "-o", str(tmp_path / "out")]) == 2
    assert (tmp_path / "out" / "keep.txt").read_text() == "mine"
    (tmp_path / "new.tar.gz").write_text("mine too")
    capsys.readouterr()
    assert main(["kit", str(proj), "--entry", "step.py:step", "-o", str(tmp_path / "new")]) == 2
    assert "the kit's archive would replace it" in capsys.readouterr().err
    assert (tmp_path / "new.tar.gz").read_text() == "mine too" and not (tmp_path / "new").exists()


def test_script_is_posix_sh(tmp_path):
    _, out = _build(tmp_path, "--tests")
    script = out / "run-on-mac.sh"
    for shell in ("sh", "dash", "bash"):
        if shutil.which(shell):
            assert subprocess.run([shell, "-n", str(script)], capture_output=True).returncode == 0, shell
    if shutil.which("shellcheck"):
        res = subprocess.run(["shellcheck", "-s", "sh", str(script)], capture_output=True, text=True)
        assert res.returncode == 0, res.stdout
    text = script.read_text()
    assert "[[" not in text and "local " not in text and "pipefail" not in text
    assert "MPSREADY_KIT_DEVICE" in text and "MPSREADY_KIT_PYTHON" in text


def test_cuda_kit_records_the_reference_with_the_same_manifest(tmp_path):
    _, out = _build(tmp_path, "--device", "cuda")
    doc = json.loads((out / "manifest.json").read_text())
    assert doc["device"] == "cuda"
    assert not any("ops --dump-installed" in c for c in doc["commands"])
    assert "$PY -m mpsready record step.py:step --device $DEVICE --steps 6 --out ../results/record-device --project . " \
           "--timeout 1500" in doc["commands"]
    text = (out / "run-on-mac.sh").read_text()
    assert "DEVICE=${MPSREADY_KIT_DEVICE:-cuda}" in text
    assert (out / "MANIFEST.md").read_text().splitlines()[0] == manifest.UNSIGNED_LINE


def test_record_refuses_an_input_spec_that_is_not_one(tmp_path, capsys):
    entry = tmp_path / "e.py"
    entry.write_text("def step():\n    return None\n")
    bad = tmp_path / "inputs.json"
    bad.write_text(json.dumps({"schema": {"name": "mpsready.scan", "version": 1}}))
    assert main(["record", f"{entry}:step", "--device", "cpu", "--synthetic-inputs", str(bad), "--out",
                 str(tmp_path / "rec")]) == 2
    assert "--synthetic-inputs: cannot read" in capsys.readouterr().err
    assert not (tmp_path / "rec").exists()


def test_reference_travels_as_statistics_and_the_mac_compares_with_it(tmp_path, capsys):
    from tests.report import fixtures as fx

    ref = fx.write_record(tmp_path / "cuda-ref", "cuda")
    capsys.readouterr()
    proj = project(tmp_path / "proj")
    assert main(["kit", str(proj), "--entry", "step.py:step", "-o", str(tmp_path / "k1"), "--reference",
                 str(ref)]) == 2
    assert "was not recorded with --synthetic-inputs" in capsys.readouterr().err
    doc = json.loads((ref / "record.json").read_text())
    doc["synthetic_inputs"] = "inputs.json"
    doc["inputs"] = {"structure": {"type": "tensor", "name": "inputs"},
                     "tensors": [{"name": "inputs", "shape": [2, 4], "dtype": "float32", "min": 0.0, "max": 1.0}]}
    (ref / "record.json").write_text(json.dumps(doc))
    assert main(["kit", str(proj), "--entry", "step.py:step", "-o", str(tmp_path / "k2"), "--reference",
                 str(ref)]) == 0
    kit = tmp_path / "k2"
    assert sorted(p.name for p in (kit / "reference").iterdir()) == ["record.json", "tensors.jsonl"]
    assert json.loads((kit / "inputs.json").read_text())["inputs"]["tensors"][0]["shape"] == [2, 4]
    m = json.loads((kit / "manifest.json").read_text())
    assert "$PY -m mpsready compare ../reference ../results/record-device --format json " \
           "-o ../results/compare-reference.json" in m["commands"]
    text = (kit / "run-on-mac.sh").read_text()
    assert 'step compare-reference 600 "$PY" -m mpsready compare "$KIT/reference" "$RESULTS/record-device"' in text
    assert subprocess.run(["sh", "-n", str(kit / "run-on-mac.sh")]).returncode == 0


def test_a_kit_folder_that_cannot_be_written_is_a_usage_error_and_leaves_nothing(tmp_path, capsys):
    """h40: ``-o`` under a regular file (or a read-only folder) ended as an internal error (exit 3); --approve where
    the archive cannot be made again did too, after the sign-off was written."""
    proj = project(tmp_path / "proj")
    (tmp_path / "afile").write_text("mine")
    assert main(["kit", str(proj), "--entry", "step.py:step", "-o", str(tmp_path / "afile" / "kit")]) == 2
    err = capsys.readouterr().err
    assert err == f"mpsready kit: error: -o {tmp_path / 'afile' / 'kit'}: cannot write the kit: Not a directory\n"
    assert (tmp_path / "afile").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "proj"]

    _, out = _build(tmp_path / "second")
    capsys.readouterr()
    archive = out.with_name(out.name + ".tar.gz")
    archive.unlink()
    (archive / "x").mkdir(parents=True)  # the archive's name is taken by a folder: it cannot be replaced
    assert main(["kit", "--approve", str(out), "--by", "x", "--rule", "y"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mpsready kit: error: --approve: signed in {out}, but its archive {out.name}.tar.gz "
                          "could not be written: ")
    assert not out.with_name(out.name + ".tar.gz.partial").exists()
