"""Lock files: poetry.lock, uv.lock, pdm.lock (TOML, ``[[package]]`` tables) and Pipfile.lock (JSON).

A lock file lists every transitive package; they are reported as locked (optional=False) because
an install from the lock installs them all.
"""

from __future__ import annotations

import json
from pathlib import PurePosixPath

from mpsready.scan.rules import inputs as I
from mpsready.scan.sources import tomlfile
from mpsready.scan.sources.interface import Dependency, DependencySource, ProjectFiles, RawFinding, SourceResult
from mpsready.scan.sources.pyproject import find_line

TOML_LOCKS = ("poetry.lock", "uv.lock", "pdm.lock", "pylock.toml")


class LockfileSource(DependencySource):
    name = "lock file"

    def matches(self, relpath: str) -> bool:
        name = PurePosixPath(relpath).name
        return name in TOML_LOCKS or name == "Pipfile.lock" or (name.startswith("pylock.") and name.endswith(".toml"))

    def collect(self, relpath: str, text: str, files: ProjectFiles) -> SourceResult:
        result = SourceResult()
        if PurePosixPath(relpath).name == "Pipfile.lock":
            try:
                doc = json.loads(text)
            except json.JSONDecodeError as exc:
                result.findings.append(RawFinding(I.MALFORMED_CONFIG, relpath, exc.lineno, f"Pipfile.lock is not JSON: {exc.msg}"))
                return result
            except RecursionError:
                result.findings.append(RawFinding(I.MALFORMED_CONFIG, relpath, None, "Pipfile.lock JSON is nested too deeply to read"))
                return result
            for section, optional in (("default", False), ("develop", True)):
                for name, spec in (doc.get(section) or {}).items() if isinstance(doc, dict) else []:
                    version = spec.get("version", "") if isinstance(spec, dict) else ""
                    result.dependencies.append(Dependency(name=name, path=relpath, line=find_line(text, f'"{name}"'),
                                                          specifier=version, optional=optional, group=f"lock:{section}"))
            return result
        doc = tomlfile.load_declaration(result, relpath, text)
        if doc is None:
            return result
        for pkg in doc.get("package") or doc.get("packages") or []:
            if isinstance(pkg, dict) and isinstance(pkg.get("name"), str):
                version = pkg.get("version")
                result.dependencies.append(Dependency(
                    name=pkg["name"], path=relpath, line=find_line(text, f'name = "{pkg["name"]}"'),
                    specifier=f"=={version}" if isinstance(version, str) else "", group="lock"))
        return result
