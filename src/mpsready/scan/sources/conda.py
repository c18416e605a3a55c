"""environment.yml / conda.yaml: conda dependencies, the pip section, channels (nvidia), CUDA packages."""

from __future__ import annotations

from pathlib import PurePosixPath

import yaml

from mpsready.findings import Severity
from mpsready.scan.rules import deps as D
from mpsready.scan.rules import inputs as I
from mpsready.scan.sources import pip_options
from mpsready.scan.sources.interface import line_guard
from mpsready.scan.sources.interface import Dependency, DependencySource, ProjectFiles, RawFinding, SourceResult
from mpsready.scan.sources.pep508 import add_requirement


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


_STR = "tag:yaml.org,2002:str"
_NULL = "tag:yaml.org,2002:null"
_KINDS = {"tag:yaml.org,2002:int": "int", "tag:yaml.org,2002:float": "float", "tag:yaml.org,2002:bool": "bool",
          _STR: "str", _NULL: "NoneType"}


MAX_FLOW_NESTING = 200  # without libyaml: PyYAML's Python scanner slows down with the square of the nesting


MAX_SKIPPED_LINES = 10  # lines a broken YAML file may have skipped, each with a new parse, before it is given up


def compose(text: str) -> yaml.Node | None:
    """The YAML node tree of ``text`` (PyYAML's safe composer), without building Python values: nodes keep
    their own line (``start_mark``), aliases stay shared nodes, and scalars stay text (a 5,000-digit
    integer is never converted). Uses libyaml (``CSafeLoader``, linear, refuses nesting past 1,000 levels)
    when PyYAML has it, else the Python composer behind a nesting check. Raises ``yaml.YAMLError`` or
    ``RecursionError`` (nesting)."""
    if getattr(yaml, "__with_libyaml__", False):
        try:
            loader = yaml.CSafeLoader(text)  # hands libyaml the text as UTF-8
        except UnicodeEncodeError as exc:  # a lone surrogate (from a decoder with errors="surrogateescape")
            raise yaml.YAMLError(f"not valid Unicode (a lone surrogate at character {exc.start})") from None
    else:  # pragma: no cover - PyYAML wheels ship libyaml
        if text.count("[") + text.count("{") > MAX_FLOW_NESTING and _flow_depth(text) > MAX_FLOW_NESTING:
            raise RecursionError("flow collections nested too deeply")
        loader = yaml.SafeLoader(text)
    try:
        return loader.get_single_node()
    finally:
        loader.dispose()


def _flow_depth(text: str) -> int:
    depth = deepest = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth = max(0, depth - 1)
    return deepest


def _line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def _text(node: yaml.Node | None) -> str | None:
    """The value of a plain or quoted string scalar, else ``None``."""
    return node.value if isinstance(node, yaml.ScalarNode) and node.tag == _STR else None


def _get(node: yaml.MappingNode, key: str) -> yaml.Node | None:
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            return v
    return None


def _kind(node: yaml.Node | None) -> str:
    if node is None or (isinstance(node, yaml.ScalarNode) and node.tag == _NULL):
        return "NoneType"
    if isinstance(node, yaml.SequenceNode):
        return "list"
    if isinstance(node, yaml.MappingNode):
        return "dict"
    return _KINDS.get(node.tag, "str")


def _describe(node: yaml.Node) -> str:
    """A short description of a node for a message; bounded whatever the node holds (YAML aliases can make a
    small file a structure of 10**12 items, the "billion laughs")."""
    if isinstance(node, yaml.ScalarNode):
        value = node.value if len(node.value) <= 60 else node.value[:57] + "..."
        return repr(value) if node.tag == _STR else f"{value} ({_kind(node)})"
    if isinstance(node, yaml.SequenceNode):
        return f"a list of {len(node.value)} items"
    keys = [k.value for k, _v in node.value[:4] if isinstance(k, yaml.ScalarNode)]
    return f"a mapping with keys {', '.join(repr(k[:40]) for k in keys)}{', ...' if len(node.value) > 4 else ''}"


class CondaSource(DependencySource):
    name = "conda environment"

    def matches(self, relpath: str) -> bool:
        return is_conda_file(relpath)

    def collect(self, relpath: str, text: str, files: ProjectFiles, result: SourceResult | None = None) -> SourceResult:
        result = SourceResult() if result is None else result
        lines: list[str] | None = None
        for attempt in range(MAX_SKIPPED_LINES + 1):
            try:
                doc = compose(text)
                break
            except yaml.YAMLError as exc:
                mark = getattr(exc, "problem_mark", None)
                line = mark.line + 1 if mark is not None else None
                deep = "maximum nesting depth" in str(exc)  # libyaml's own limit (1,000 levels)
                why = "YAML nested too deeply to read" if deep else f"YAML does not parse: {str(exc).splitlines()[0]}"
                lines = text.split("\n") if lines is None else lines
                # the line the parser stopped on is skipped and the file read again (a bounded number of times),
                # so a bad line does not hide the dependencies after it
                if attempt < MAX_SKIPPED_LINES and line is not None and line <= len(lines) and lines[line - 1].strip():
                    with line_guard(result, relpath, line):  # the file's time budget, between two parses
                        pass
                    result.findings.append(RawFinding(I.BROKEN_YAML, relpath, line,
                                                      f"{why}; line {line} skipped, the rest of the file read"))
                    lines[line - 1] = ""
                    text = "\n".join(lines)
                    continue
                result.findings.append(RawFinding(I.BROKEN_YAML, relpath, line, why))
                return result
            except RecursionError:  # PyYAML composes nested collections recursively
                result.findings.append(RawFinding(I.BROKEN_YAML, relpath, None, "YAML nested too deeply to read"))
                return result
        kind = _kind(doc)
        if kind not in ("NoneType", "dict") and PurePosixPath(relpath).stem.lower().startswith(("environment", "conda")):
            # environment.yml by name, yet not a mapping: conda would refuse it, and nothing in it was read
            result.findings.append(RawFinding(I.BROKEN_YAML, relpath, 1, f"a conda environment file must be a mapping "
                                              f"with 'dependencies'; this one is a YAML {kind}"))
            return result
        if kind != "dict" or _get(doc, "dependencies") is None:
            if kind == "dict" and (_get(doc, "channels") is not None or _get(doc, "name") is not None):
                result.findings.append(RawFinding(I.BROKEN_YAML, relpath, 1, "conda environment without a 'dependencies' list"))
            return result  # some other YAML file (a config); not a conda environment
        channels = _get(doc, "channels")
        if isinstance(channels, yaml.SequenceNode):
            for ch in channels.value:
                if _text(ch) is not None:
                    conda_channel_finding(result, ch.value, relpath, _line(ch))
        elif _kind(channels) != "NoneType":
            result.findings.append(RawFinding(I.BROKEN_YAML, relpath, _line(channels),
                                              f"'channels' is {_describe(channels)}, not a list; ignored"))
        deps = _get(doc, "dependencies")
        if not isinstance(deps, yaml.SequenceNode):
            result.findings.append(RawFinding(I.BROKEN_YAML, relpath, _line(deps), "'dependencies' is not a list"))
            return result
        for item in deps.value:
            with line_guard(result, relpath, _line(item), "dependency entry"):
                spec = _text(item)
                pip = _get(item, "pip") if isinstance(item, yaml.MappingNode) else None
                if spec is not None:
                    name = conda_spec_name(spec)
                    if name:
                        if "::" in spec and spec.split("::")[0].lower() == "nvidia":
                            conda_channel_finding(result, "nvidia", relpath, _line(item))
                        result.dependencies.append(Dependency(name=name, path=relpath, line=_line(item),
                                                              specifier=spec[len(name):] if spec.startswith(name) else "",
                                                              ecosystem="conda", raw=spec))
                elif isinstance(pip, yaml.SequenceNode):
                    for node in pip.value:
                        with line_guard(result, relpath, _line(node), "pip entry"):
                            req = _text(node)
                            if req is None:
                                continue
                            if req.startswith("-"):
                                opt, _, value = req.replace("=", " ", 1).partition(" ")
                                pip_options.check_index_option(result, relpath, _line(node), opt, value.strip())
                            elif "://" not in req and not req.startswith((".", "/")):
                                add_requirement(result, req, relpath, _line(node))
                else:
                    result.findings.append(RawFinding(I.BROKEN_YAML, relpath, _line(item),
                                                      f"unexpected dependency entry {_describe(item)}"))
        return result
