"""What the README's install leaves out (issue 32, item 3; round 9): a part's own requirement file.

A requirement file in a sub-folder of the project (``pkg/deploy/requirements.txt``, ``scripts/tfew/requirements.txt``,
``requirements/train.txt``) belongs to that part when the README's install never names it: the README installs the
package by name (``pip install pkg``), the project itself (``pip install -e .``) or other files, and none of those
includes this one (``-r``). Its dependencies are optional (``evidence.optional``): they get their own outlook line
(:func:`mpsready.scan.outlook.optional_parts`), never the headline. A README with no install command at all decides
nothing (every file counts, as before), and a file the README's install names, or one it includes, stays required;
so does one whose name the install gives without a folder (``cd inference && pip install -r requirements.txt``
names ``requirements.txt``: the ``cd`` is not followed, so every ``requirements.txt`` below the root stays required).
"""

from __future__ import annotations

from collections.abc import Collection

from mpsready.scan.model.graph import feature_manifest, platform_manifest


def part_manifest(path: str, installs: Collection[str] | None) -> bool:
    """Whether ``path`` is a requirement file the README's install (``installs``: the files it names and the files
    those include; empty when it installs by package name only; None when the README has no install) leaves out
    (see the module doc): a feature's file (:func:`~mpsready.scan.model.graph.feature_manifest`) when the install
    names files, or any requirement file below the root (``x/requirements.txt`` included) once the install is
    known."""
    if installs is None or path in installs:
        return False
    if any("/" not in named and path.endswith("/" + named) for named in installs):
        return False  # `cd inference && pip install -r requirements.txt`: the README's folder is not followed, keep it
    if installs and feature_manifest(path):
        return True
    # a folder of the project's own declarations (requirements/, env/, conda/) is not a part's (h32f's look-alike):
    # with a by-name install it stays required, the cautious answer
    return "/" in path and platform_manifest(path) and path.split("/", 1)[0].lower() not in _DECLARATION_FOLDERS


# folders that hold the project's own declarations, not a part's (from h32f's round-9 rule, merged into this one)
_DECLARATION_FOLDERS = frozenset({"requirements", "requirement", "env", "envs", "environment", "environments",
                                  "conda", "install", "installation", "setup"})
