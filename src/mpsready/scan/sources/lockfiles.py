"""Lock files: poetry.lock, uv.lock, pdm.lock (TOML, ``[[package]]`` tables) and Pipfile.lock (JSON).

A lock file lists every transitive package; they are reported as locked (optional=False) because
an install from the lock installs them all.
"""

from __future__ import annotations

import json
from pathlib import PurePosixPath

from mpsready.scan.rules import inputs as I
from mpsready.scan.sources import tomlfile
from mpsready.scan.sources.interface import (Dependency, DependencySource, ProjectFiles, RawFinding, SourceResult,
                                             json_int, short_repr)
from mpsready.scan.sources.lines import LineIndex

TOML_LOCKS = ("poetry.lock", "uv.lock", "pdm.lock", "pylock.toml")


class LockfileSource(DependencySource):
    name = "lock file"

    def matches(self, relpath: str) -> bool:
        name = PurePosixPath(relpath).name
        return name in TOML_LOCKS or name == "Pipfile.lock" or (name.startswith("pylock.") and name.endswith(".toml"))

    def collect(self, relpath: str, text: str, files: ProjectFiles, result: SourceResult | None = None) -> SourceResult:
        result = SourceResult() if result is None else result
        if PurePosixPath(relpath).name == "Pipfile.lock":
            self._pipfile_lock(relpath, text, result)
            return result
        doc = tomlfile.load_declaration(result, relpath, text)
        if doc is None:
            return result
        index = LineIndex(text)
        key = "package" if "package" in doc else "packages"
        packages = doc.get(key)
        if packages is not None and not isinstance(packages, list):
            result.findings.append(RawFinding(I.MALFORMED_CONFIG, relpath, index.find(key),
                                              f"{key} = {short_repr(packages)} ignored: expected [[{key}]] tables"))
            return result
        for pkg in packages or []:
            if isinstance(pkg, dict) and isinstance(pkg.get("name"), str):
                version = pkg.get("version")
                result.dependencies.append(Dependency(
                    name=pkg["name"], path=relpath, line=index.find(f'name = "{pkg["name"]}"'),
                    specifier=f"=={version}" if isinstance(version, str) else "", group="lock"))
        return result

    def _pipfile_lock(self, relpath: str, text: str, result: SourceResult) -> None:
        try:
            doc = json.loads(text, parse_int=json_int)  # a 5,000-digit int would lose the whole file
        except json.JSONDecodeError as exc:
            result.findings.append(RawFinding(I.MALFORMED_CONFIG, relpath, exc.lineno, f"Pipfile.lock is not JSON: {exc.msg}"))
            return
        except RecursionError:
            result.findings.append(RawFinding(I.MALFORMED_CONFIG, relpath, None, "Pipfile.lock JSON is nested too deeply to read"))
            return
        if not isinstance(doc, dict):
            result.findings.append(RawFinding(I.MALFORMED_CONFIG, relpath, 1,
                                              f"Pipfile.lock is a JSON {type(doc).__name__}, not an object; not read"))
            return
        index = LineIndex(text)
        for section, optional in (("default", False), ("develop", True)):
            table = doc.get(section)
            if table is None:
                continue
            if not isinstance(table, dict):
                result.findings.append(RawFinding(I.MALFORMED_CONFIG, relpath, index.find(section),
                                                  f"Pipfile.lock {section!r} is {short_repr(table)}, not an object; ignored"))
                continue
            for name, spec in table.items():
                version = spec.get("version", "") if isinstance(spec, dict) else ""
                result.dependencies.append(Dependency(name=name, path=relpath, line=index.find(name),
                                                      specifier=version if isinstance(version, str) else "",
                                                      optional=optional, group=f"lock:{section}"))
