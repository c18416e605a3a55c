"""``python -m mpsready`` from inside a project (builder h40, 2026-12-07): Python puts the current folder first on
``sys.path`` for ``-m``, so a project's ``yaml.py`` (or ``packaging/``, ``rich.py``...) was imported, and run, by
mpsready's own process in place of the library: ``python -m mpsready scan .`` executed the project's code ("nothing
runs during a scan"), and ``migrate . --verify`` ended in an internal error (exit 3). The console script never had
the folder on its path; ``__main__`` now drops it as Python's ``-P`` does."""
from __future__ import annotations

import subprocess
import sys


def test_python_m_mpsready_never_imports_the_current_folders_modules(tmp_path):
    (tmp_path / "yaml.py").write_text('raise SystemExit("the project yaml.py was imported by mpsready")\n')
    (tmp_path / "t.py").write_text("import torch\nx = torch.ones(2)\n")
    res = subprocess.run([sys.executable, "-m", "mpsready", "scan", ".", "--format", "concise", "--exit-zero"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert "yaml.py was imported" not in res.stdout + res.stderr
    assert res.returncode == 0, res.stderr
