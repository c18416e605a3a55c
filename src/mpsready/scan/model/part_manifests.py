"""A part's own requirement file (issue 32, round 9): a plain ``requirements.txt`` inside a folder of the project
(``pkg/deploy/requirements.txt`` beside ``export.py``; ``scripts/baseline/requirements.txt`` beside its run scripts)
lists what that part needs: the deployment exporter, a paper baseline. When the README shows an install command and that command neither
names the file nor installs any file of that name (``pip install pkg`` installs the package's own declaration), the
file is **optional**: its findings get their own outlook line and never the headline, as a feature's requirement file
(:func:`mpsready.scan.model.graph.feature_manifest`) already does.

Not a part's file: one at the project root, one in a folder named for the project's own declarations
(``requirements/``, ``env/``, ``conda/``, ``install/``), and any file when the README
installs a file of the same name (``cd inference && pip install -r requirements.txt`` names it without its folder,
so which one is meant is not known) or shows no install command at all.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePosixPath

# folders that hold the project's own declarations, not a part's
_DECLARATION_FOLDERS = ("requirements", "requirement", "env", "envs", "environment", "environments", "conda", "install",
                        "installation", "setup")


def part_manifest(path: str, installs: Iterable[str] | None) -> bool:
    """Whether ``path`` is a part's own requirement file the README's install does not use (see the module doc);
    ``installs`` is :attr:`~mpsready.scan.model.entries.DeclaredEntries.installs` (None: the README shows no install
    command)."""
    p = PurePosixPath(path)
    if installs is None or p.name.lower() != "requirements.txt" or len(p.parts) < 2:
        return False
    if any(q.lower() in _DECLARATION_FOLDERS for q in p.parts[:-1]):
        return False
    return not any(PurePosixPath(rel).name.lower() == p.name.lower() for rel in installs)
