"""Extras the README's install names are required (issue 32, item 3; round 11).

A dependency the project declares under an extra (``extras_require={"vllm": [...]}``, PEP 621
``optional-dependencies``) is optional (``evidence.optional``, its own outlook line). When the README installs the
project *with* that extra (``pip install -e ".[vllm]"``, ``pip install openrlhf[vllm]``, ``uv pip install
.[train,eval]``), a user who follows the README gets it: it is required, and limits the headline like any other
declared dependency. The README is read as text, never run (the same blocks :func:`entries.readme_sections` gives);
an install counts when its target is the project itself: ``.``, a path below the root, or the project's own
distribution name (``[project] name`` of ``pyproject.toml``, ``name=`` in ``setup.py``'s ``setup()`` call, read with
``ast``) or, as a user's clone is named, the folder scanned. An extra named for another package (``pip install transformers[torch]``)
changes nothing. Only the README's main install counts: the first code block that installs the project (with extras
or without); an extra a later block installs (``pip install -e .[compile]  # optional``, a backend's own install
line further down) is a feature's, and stays optional.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from mpsready.findings import Finding
from mpsready.scan import knowledge

_INSTALLERS = ("pip", "pip3", "uv")


def readme_extras(sources) -> dict[str, str]:
    """extra name (PEP 685 normalised) -> the README line's words that install it, for the project's own extras
    the first README found names in an install command; empty without a README or such a command. ``sources``
    reads project files (:class:`~mpsready.scan.model.reread.SourceTrees`)."""
    from mpsready.scan.model.entries import READMES, readme_sections

    own = _project_names(sources)
    root = getattr(getattr(getattr(sources, "_read", None), "__self__", None), "root", None)  # ProjectFiles.read_text
    if root is not None:  # a setup.py that computes its name (`name=_fetch_package_name()`): the clone's folder
        own.add(knowledge.canonical_name(Path(root).name))
    for name in READMES:
        text = sources.text(name)
        if text is None:
            continue
        found: dict[str, str] = {}
        for _heading, block in readme_sections(text, markdown=name.lower().endswith(".md")):
            installs = False
            for line in block:
                for extra, words in _installed_extras(line, own):
                    if extra:
                        found.setdefault(extra, words)
                    installs = True
            if installs:  # the first block that installs the project is the main install; later ones are features
                return found
        return found
    return {}


def _installed_extras(line: str, own: set[str]) -> Iterable[tuple[str, str]]:
    from mpsready.scan.sources.shell import lex_words

    try:
        words = lex_words(line)
    except ValueError:  # an open quote: nothing readable
        return
    for i, w in enumerate(words):
        if w != "install" or not i or words[i - 1] not in _INSTALLERS:
            continue
        for target in words[i + 1:]:
            if target in ("&&", ";", "|", "||"):
                break
            base, bracket, rest = target.partition("[")
            base = base.removeprefix("-e").strip()
            if not bracket and _is_project(base, own) and target != "-e":
                yield "", ""  # the project installed without extras: still its main install
            elif bracket and rest.endswith("]") and _is_project(base, own):
                for extra in rest[:-1].split(","):
                    if extra.strip():
                        yield knowledge.canonical_name(extra.strip()), " ".join(words[i - 1:i + 2 + 3])


def _is_project(base: str, own: set[str]) -> bool:
    """Whether an install target names the project: a path (``.``, ``./``, ``./pkg``) or its distribution name."""
    if base in ("", ".") or base.startswith("./"):
        return True
    return knowledge.canonical_name(base) in own


def _project_names(sources) -> set[str]:
    """The project's distribution names: ``[project] name`` / ``[tool.poetry] name`` of ``pyproject.toml`` and a
    constant ``name=`` of ``setup.py``'s ``setup()`` call."""
    names: set[str] = set()
    text = sources.text("pyproject.toml")
    if text:
        from mpsready.scan.sources import tomlfile  # total and bounded on hostile input

        try:
            data = tomlfile.loads(text)
        except tomlfile.TOMLDecodeError:
            data = {}  # its INP finding comes from the declaration reader
        for table in (data.get("project"), (data.get("tool") or {}).get("poetry")):
            if isinstance(table, dict) and isinstance(table.get("name"), str):
                names.add(knowledge.canonical_name(table["name"]))
    tree = sources.tree("setup.py")
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "setup":
            for kw in node.keywords:
                if kw.arg == "name" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
                    names.add(knowledge.canonical_name(kw.value.value))
    return names


def required_extras(findings: list[Finding], sources) -> list[Finding]:
    """``findings`` with the optional mark taken off the declared dependencies of an extra the README installs
    (``evidence.group`` ``extra:<name>``): they carry ``evidence.required_by`` (the README's install words) instead.
    A dependency optional for another reason (a part's requirement file, a Mac-only file) keeps its mark."""
    marked = {id(f) for f in findings if (f.evidence or {}).get("optional") is True
              and str((f.evidence or {}).get("group") or "").startswith("extra:")}
    if not marked:
        return findings
    extras = readme_extras(sources)
    if not extras:
        return findings
    out = []
    for f in findings:
        ev = f.evidence or {}
        extra = knowledge.canonical_name(str(ev.get("group") or "").removeprefix("extra:"))
        if id(f) in marked and extra in extras:
            kept = {k: v for k, v in ev.items() if k != "optional"}
            f = f.with_evidence({**kept, "required_by": f"the README installs the extra [{extra}] "
                                                        f"({extras[extra]})"})
        out.append(f)
    return out
