"""Warnings under ``mpsready run`` name the program's line, not the emulator's (h6: ``float(loss)`` printed
``.../mpsready/emulate/device.py:92: UserWarning: ...`` and ``return func(*args)``)."""
from __future__ import annotations

import os
import subprocess
import sys
import warnings

import pytest

import mpsready
from mpsready.run.warning_place import install

SRC = os.path.dirname(os.path.dirname(mpsready.__file__))

EMU = "import warnings\n\n\ndef call():\n    warnings.warn('from C++', UserWarning)  # stack level 1, as PyErr_WarnEx\n"
PROG = "import emu\n\n\ndef step():\n    emu.call()\n"


def _recorded(install_args, act):
    """The warnings ``act`` raises, as the hook chain shows them (installed inside ``record=True``, which sets the
    original hook; the recorder sits behind it)."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        undo = install(*install_args)
        try:
            act()
        finally:
            undo()
    return [(w.filename, w.lineno, str(w.message), w.line) for w in seen]


def test_a_warning_raised_in_our_files_is_shown_at_the_callers_line(tmp_path, monkeypatch):
    ours = tmp_path / "ours"
    ours.mkdir()
    (ours / "emu.py").write_text(EMU)
    (tmp_path / "prog.py").write_text(PROG)
    monkeypatch.syspath_prepend(str(ours))
    monkeypatch.syspath_prepend(str(tmp_path))
    import prog

    try:
        seen = _recorded(([str(ours) + "/"], []), prog.step)
    finally:
        sys.modules.pop("prog", None)
        sys.modules.pop("emu", None)
    assert seen == [(str(tmp_path / "prog.py"), 5, "from C++", None)]


def test_a_warning_of_another_file_keeps_its_place(tmp_path):
    seen = _recorded(([str(tmp_path / "ours") + "/"], []),
                     lambda: warnings.warn_explicit("elsewhere", UserWarning, "/nowhere/lib.py", 7))
    assert seen == [("/nowhere/lib.py", 7, "elsewhere", None)]


def test_undo_restores_the_hook():
    before = warnings.showwarning
    install(["/x/"], [])()
    assert warnings.showwarning is before


PROGRAM = """import torch
model = torch.nn.Linear(2, 1).to("mps")
loss = model(torch.ones(1, 2, device="mps")).sum()
print(float(loss) == float(loss))
"""


def test_torchs_cpp_warning_names_the_program_line_under_run(tmp_path):
    pytest.importorskip("torch")
    (tmp_path / "train.py").write_text(PROGRAM)
    (tmp_path / "cpu.py").write_text(PROGRAM.replace('"mps"', '"cpu"'))
    cpu = subprocess.run([sys.executable, "cpu.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    if "UserWarning" not in cpu.stderr:
        pytest.skip("this PyTorch warns nothing on float() of a tensor that requires grad (before 2.9)")
    p = subprocess.run([sys.executable, "-m", "mpsready", "-q", "run", "--torch", "2.13", "--format", "json", "-o",
                        "out.json", "--", "python", "train.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": SRC})  # this checkout's mpsready, from any cwd
    assert (p.returncode, p.stdout) == (0, "True\n")
    # the place and source line the CPU run of the same program prints (it was mpsready/emulate/device.py:92)
    lines = p.stderr.splitlines()
    assert lines[0].startswith(f"{tmp_path / 'train.py'}:4: UserWarning: Converting a tensor with requires_grad=True")
    assert lines[0].split(": ", 1)[1] == cpu.stderr.splitlines()[0].split(": ", 1)[1]
    assert lines[2] == "  print(float(loss) == float(loss))"
    assert "mpsready/emulate" not in p.stderr
