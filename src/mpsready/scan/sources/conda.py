"""environment.yml / conda.yaml: conda dependencies, the pip section, channels (nvidia), CUDA packages."""

from __future__ import annotations

import reprlib
from pathlib import PurePosixPath

import yaml

from mpsready.findings import Severity
from mpsready.scan.rules import deps as D
from mpsready.scan.rules import inputs as I
from mpsready.scan.sources.interface import Dependency, DependencySource, ProjectFiles, RawFinding, SourceResult
from mpsready.scan.sources.pep508 import add_requirement
from mpsready.scan.sources.pyproject import find_line


_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxdict, _SHORT.maxstring, _SHORT.maxother = 2, 4, 4, 60, 60


def is_conda_file(relpath: str) -> bool:
    p = PurePosixPath(relpath)
    if p.suffix not in (".yml", ".yaml"):
        return False
    stem = p.stem.lower()
    return stem.startswith(("environment", "conda", "env")) or stem.endswith(("environment", "_env", "-env", ".env"))


def conda_spec_name(spec: str) -> str | None:
    """Package name of a conda match spec: ``pytorch-cuda=12.1``, ``nvidia::cuda-toolkit``, ``numpy>=1.2``."""
    spec = spec.strip()
    if "::" in spec:
        spec = spec.split("::", 1)[1]
    for i, ch in enumerate(spec):
        if ch in "=<>!~ [":
            spec = spec[:i]
            break
    return spec or None


def conda_channel_finding(result: SourceResult, channel: str, path: str, line: int | None) -> None:
    if channel.strip().lower() in ("nvidia", "rapidsai", "rapidsai-nightly"):
        result.findings.append(RawFinding(D.CONDA_CUDA, path, line, f"conda channel {channel!r} carries CUDA builds only",
                                          severity=Severity.DEGRADES, evidence={"channel": channel}))


class CondaSource(DependencySource):
    name = "conda environment"

    def matches(self, relpath: str) -> bool:
        return is_conda_file(relpath)

    def collect(self, relpath: str, text: str, files: ProjectFiles) -> SourceResult:
        result = SourceResult()
        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 1 if mark is not None else None
            result.findings.append(RawFinding(I.BROKEN_YAML, relpath, line, f"YAML does not parse: {str(exc).splitlines()[0]}"))
            return result
        except RecursionError:  # PyYAML composes nested collections recursively
            result.findings.append(RawFinding(I.BROKEN_YAML, relpath, None, "YAML nested too deeply to read"))
            return result
        if doc is not None and not isinstance(doc, dict) and PurePosixPath(relpath).stem.lower().startswith(("environment", "conda")):
            # environment.yml by name, yet not a mapping: conda would refuse it, and nothing in it was read
            result.findings.append(RawFinding(I.BROKEN_YAML, relpath, 1, f"a conda environment file must be a mapping "
                                              f"with 'dependencies'; this one is a YAML {type(doc).__name__}"))
            return result
        if not isinstance(doc, dict) or "dependencies" not in doc:
            if isinstance(doc, dict) and ("channels" in doc or "name" in doc):
                result.findings.append(RawFinding(I.BROKEN_YAML, relpath, 1, "conda environment without a 'dependencies' list"))
            return result  # some other YAML file (a config); not a conda environment
        for ch in doc.get("channels") or []:
            if isinstance(ch, str):
                conda_channel_finding(result, ch, relpath, find_line(text, ch))
        deps = doc.get("dependencies")
        if not isinstance(deps, list):
            result.findings.append(RawFinding(I.BROKEN_YAML, relpath, find_line(text, "dependencies"),
                                              "'dependencies' is not a list"))
            return result
        for item in deps:
            if isinstance(item, str):
                name = conda_spec_name(item)
                if name:
                    if "::" in item and item.split("::")[0].lower() == "nvidia":
                        conda_channel_finding(result, "nvidia", relpath, find_line(text, item))
                    result.dependencies.append(Dependency(name=name, path=relpath, line=find_line(text, item),
                                                          specifier=item[len(name):] if item.startswith(name) else "",
                                                          ecosystem="conda", raw=item))
            elif isinstance(item, dict) and isinstance(item.get("pip"), list):
                for req in item["pip"]:
                    if not isinstance(req, str):
                        continue
                    if req.startswith("-"):
                        from mpsready.scan.sources import pip_options
                        opt, _, value = req.replace("=", " ", 1).partition(" ")
                        pip_options.check_index_option(result, relpath, find_line(text, req), opt, value.strip())
                    elif "://" not in req and not req.startswith((".", "/")):
                        add_requirement(result, req, relpath, find_line(text, req))
            else:
                # a bounded repr: YAML aliases can make a small file a structure of 10**12 items ("billion laughs")
                result.findings.append(RawFinding(I.BROKEN_YAML, relpath, None,
                                                  f"unexpected dependency entry {_SHORT.repr(item)}"))
        return result
