"""The project's declared main entries: scripts its README runs, and its console-script entry points.

A README's commands say which scripts are the project's main work better than their names do (DiT's
README runs ``python sample.py`` first, ``torchrun ... train.py`` second). The README at the scan root
(``README.md``, ``README.rst``, ``README.txt`` or ``README``) is read as text, never run: in Markdown its
fenced and indented code blocks and inline code spans (parsed with markdown-it-py, CommonMark), in other
formats every line. Each line is split like a shell would (:mod:`shlex`, ``&&``, ``;`` and ``|`` ending a
command, ``\\`` continuing a line) and these commands name a script of the project:

- ``python X.py``, ``python3 X.py``, ``python -m pkg.mod`` (``pkg/mod.py``, ``pkg/mod/__main__.py``, also
  under ``src/``), with any prefix (``CUDA_VISIBLE_DEVICES=0``, ``uv run``, ``nohup``); ``uv run -m pkg.mod`` and
  ``uv run X.py`` too (uv starts Python itself: ``uv run --help``, "--module, -m: Run a Python module");
- launchers: ``torchrun ... X.py``, ``python -m torch.distributed.launch ... X.py``,
  ``accelerate launch ... X.py``, ``deepspeed ... X.py`` (the first project script among their arguments,
  or their ``-m``/``--module`` target);
- ``bash X.sh`` / ``sh X.sh`` / ``./X.sh``: the Python commands in that shell script (one level deep).

A command naming a file the project does not have names nothing; a README larger than
:data:`MAX_README_BYTES` or longer than :data:`MAX_README_LINES` lines is not read. Console scripts come from
``[project.scripts]`` / ``[project.gui-scripts]`` in pyproject.toml, ``console_scripts`` in setup.cfg's
``[options.entry_points]`` and in a literal ``entry_points=`` of setup.py's ``setup()`` call (read with
:mod:`ast`). Unreadable or malformed files name nothing (their own readers report them).
"""

from __future__ import annotations

import ast
import configparser
import functools
import posixpath
import shlex
import warnings
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath
from typing import Any

from mpsready.scan.sources.interface import ProjectFiles, SourceError

READMES = ("README.md", "README.rst", "README.txt", "README", "readme.md", "Readme.md", "readme.rst")
_PY_OPTS_WITH_ARG = {"-W", "-X", "-Q"}
_LAUNCHERS = {"torchrun", "deepspeed", "accelerate"}
_LAUNCH_MODULES = {"torch.distributed.launch", "torch.distributed.run", "accelerate.commands.launch", "deepspeed",
                   "deepspeed.launcher.runner"}
_SHELLS = {"bash", "sh", "zsh"}
_WORDS = ("py", "torchrun", "deepspeed", "accelerate", "sh", "uv")  # a line without any of them runs no script
# a larger README is not read: markdown-it-py spends about 75 us a line (4.6 s on 256 KB of `1. a` lines,
# two shared cores); real READMEs have a few hundred to a few thousand lines
MAX_README_BYTES = 256 * 1024
MAX_README_LINES = 10_000
_COMMAND_ENDS = {";", "&&", "||", "|", "&", "(", ")", ">", ">>", "<", "2>"}


@dataclass
class DeclaredEntries:
    """Files (paths relative to the scan root) the project itself declares as run: ``readme`` (scripts its
    README's commands run, in the order met) and ``console`` (modules of console-script entry points)."""

    readme: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    # project modules the README's Python code blocks import (`from sam2.build_sam import build_sam2`): where a
    # library's users start, the main path of a project without root entry scripts
    imports: list[str] = field(default_factory=list)
    # the names those blocks import from the project's modules (`build_sam2`): its public API
    api_names: list[str] = field(default_factory=list)
    # requirement and environment files the README's install commands name (`pip install -r requirements.txt`,
    # `conda env create -f environment.yml`); None when the README shows no install command (issue 32)
    installs: list[str] | None = None
    # scripts the README runs only in a feature section (after a later install of more packages or a feature's
    # requirement file: evaluation, training with extra dependencies): secondary parts, not main entries (issue 32)
    features: list[str] = field(default_factory=list)
    # `.cuda()` calls in the README's Python code blocks when those blocks import the project (its documented
    # usage): (README path, line, the call's text); a Mac user who copies the usage must edit them (issue 32)
    usage_cuda: list[tuple[str, int, str]] = field(default_factory=list)
    # the README's scripts run as scripts (`python X.py`, `python -m pkg.mod`), not through a console command:
    # only these run their `__main__` block (issue 32, round 4); None: every README script counts
    as_script: list[str] | None = None
    # CUDA-or-CPU device choices in the README's usage code, as usage_cuda (issue 32, round 4)
    usage_cpu: list[tuple[str, int, str]] = field(default_factory=list)
    # a console-script module -> [(the command's name, the function it calls)]: the outlook prints the command, not
    # `python module.py`, for an option that function reads (issue 32, round 4)
    console_commands: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    # the project's requirement or environment files for the Mac (`requirements-mac.txt`): a Mac installs these,
    # not the other platforms' files (issue 32, round 4; filled by the engine from the walked files)
    mac_manifests: list[str] = field(default_factory=list)
    # the files that declared at least one dependency the scan read (filled by the engine): whether a container's
    # or a lock's file is the project's only install path, or the README installs a file left unread (round 12)
    declarations: list[str] = field(default_factory=list)
    # folder -> the `.cu` file names in it (filled by the engine): which Python files build them (issue 32, round 4)
    cu_sources: dict[str, list[str]] = field(default_factory=dict)
    # the project's YAML configuration files (filled by the engine): which registered component they select (round 13)
    config_files: list[str] = field(default_factory=list)

    def all(self) -> set[str]:
        return {*self.readme, *self.console}


def declared_entries(project: ProjectFiles, py_files: Collection[str]) -> DeclaredEntries:
    """The README's scripts and the console-script modules among ``py_files`` (relative POSIX paths)."""
    from mpsready.scan.model.readme_parts import console_commands, read_sections

    py = set(py_files)
    readme: dict[str, None] = {}
    imports: list[str] = []
    api: list[str] = []
    installs: list[str] | None = None
    usage_cuda: list[tuple[str, int, str]] = []
    usage_cpu: list[tuple[str, int, str]] = []
    features: dict[str, None] = {}
    readme_text: str | None = None
    readme_md = False
    small = ProjectFiles(project.root, min(project.max_bytes, MAX_README_BYTES))
    for name in READMES:
        text = _read(small, name)
        if text is None or text.count("\n") > MAX_README_LINES:
            continue
        installs = read_sections(text, name.lower().endswith(".md"), py, lambda sh: _read(project, sh), readme,
                                 features, installs)
        if name.lower().endswith(".md"):
            modules = readme_python_imports(text)
            imports = [rel for rel in (_module_file(m, py) for m in modules) if rel]
            if imports:
                from mpsready.scan.model.readme_parts import readme_cpu_selections, readme_cuda_calls

                usage_cuda = [(name, line, call) for line, call in readme_cuda_calls(text)]
                usage_cpu = [(name, line, choice) for line, choice in readme_cpu_selections(text)]
            api = sorted({m.rsplit(".", 1)[1] for m in modules
                          if "." in m and _module_file(m, py) is None and _module_file(m.rsplit(".", 1)[0], py)})
        readme_text, readme_md = text, name.lower().endswith(".md")
        break  # the first README found is the project's
    scripts = console_scripts(project)
    console = [rel for rel in (_module_file(m, py) for _n, m in scripts) if rel]
    commands: dict[str, list[tuple[str, str]]] = {}  # a console-script module -> [(command, function)] (round 4)
    for name, target in scripts:
        module, _, func = target.partition(":")
        rel = _module_file(module.strip(), py)
        if rel:
            commands.setdefault(rel, []).append((name, func.strip().split(".")[0]))

    as_script = set(readme)  # run as `python X.py` / `python -m X`: their `__main__` blocks run
    if scripts and readme_text is not None:
        console_commands(readme_text, readme_md, scripts, py, readme, features)
    if installs:  # a file an installed one includes (`-r base.txt`) is installed too
        todo, seen = list(installs), set(installs)
        while todo:
            rel = todo.pop()
            for line in (_read(project, rel) or "").splitlines()[:2000]:
                words = line.split()
                if len(words) >= 2 and words[0] in ("-r", "--requirement", "-c", "--constraint"):
                    inc = posixpath.normpath(posixpath.join(posixpath.dirname(rel), words[1]))
                    if inc not in seen:
                        seen.add(inc)
                        todo.append(inc)
        installs = list(seen)
    return DeclaredEntries(list(readme), sorted(set(console)), sorted(set(imports)), api,
                           None if installs is None else sorted(set(installs)),
                           [rel for rel in features if rel not in readme], usage_cuda, sorted(as_script),
                           usage_cpu=usage_cpu, console_commands=commands)


def _last_cd(lines: Iterable[str], py: Collection[str]) -> str | None:
    """The last ``cd DIR`` of a block whose DIR is a folder of the project (holding one of ``py``), or None."""
    last = None
    for line in lines:
        words = line.split()
        if len(words) == 2 and words[0] == "cd":
            folder = posixpath.normpath(words[1].removeprefix("./"))
            if any(rel.startswith(folder + "/") for rel in py):
                last = folder
    return last


_FILE_OPTIONS = {"-r", "--requirement", "-c", "--constraint", "-f", "--file"}


def install_files(lines: Iterable[str]) -> list[str] | None:
    """The files the install commands of a README block name (``pip install -r X``, ``uv pip install -r X``,
    ``conda env create -f X``, ``mamba env update --file X``, ``conda create --file X``), normalised to
    project-relative paths; None when the block holds no install command at all (``conda create`` without a file
    list is none: it makes an empty environment)."""
    from mpsready.scan.sources.shell import lex_words

    found: list[str] | None = None
    for line in lines:
        try:
            words = [w for w in lex_words(line) if w not in ("&&", ";", "|", "||")]
        except ValueError:  # an open quote: the line installs nothing readable
            continue
        for i, w in enumerate(words):
            listed = w == "create" and i and words[i - 1] in ("conda", "mamba") and any(
                x == "--file" or x.startswith("--file=") for x in words[i + 1:])  # `conda create --file list.txt`
            if w == "install" and i and words[i - 1] in ("pip", "pip3", "mamba", "conda", "uv") \
                    or w in ("create", "update") and i and words[i - 1] == "env" or listed:
                found = found if found is not None else []
                rest = words[i + 1:]
                for j, opt in enumerate(rest):  # every word: `--file=X` may end the line
                    if opt in _FILE_OPTIONS and j + 1 < len(rest):
                        found.append(posixpath.normpath(rest[j + 1].removeprefix("./")))
                    elif opt.startswith("--requirement=") or opt.startswith("--file="):
                        found.append(posixpath.normpath(opt.split("=", 1)[1].removeprefix("./")))
    return found


@functools.lru_cache(maxsize=2)
def _markdown_tokens(text: str) -> tuple[Any, ...]:
    """The Markdown tokens of a README, parsed once for the readers below (read only, never changed). Only code
    blocks and code spans matter: the link, HTML and emphasis rules are off (and their costs too)."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark").disable(["link", "image", "reference", "autolink", "html_inline", "html_block",
                                           "emphasis", "entity"])
    return tuple(md.parse(text))


def readme_python_imports(text: str) -> list[str]:
    """The absolute modules imported by a Markdown README's Python code blocks (fences tagged ``python``/``py``
    or ``pycon``; ``>>>`` prompts stripped), parsed with :mod:`ast`; in a block that does not parse as a whole (a
    placeholder such as ``<your_image>``) each top-level import line is parsed alone."""
    out: list[str] = []
    for tok in _markdown_tokens(text):
        if tok.type != "fence" or tok.info.strip().split(" ")[0].lower() not in ("python", "py", "python3", "pycon"):
            continue
        code = "\n".join(line[4:] if line.startswith((">>> ", "... ")) else line for line in tok.content.splitlines())
        try:
            trees = [_quiet_parse(code)]
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            # a README block with placeholders (`predictor.set_image(<your_image>)`): its import lines alone
            trees = []
            for line in code.splitlines():
                if line.startswith(("import ", "from ")):
                    try:
                        trees.append(_quiet_parse(line))
                    except (SyntaxError, ValueError, RecursionError, MemoryError):
                        continue
        for node in (n for tree in trees for n in ast.walk(tree)):
            if isinstance(node, ast.Import):
                out += [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                out += [node.module] + [f"{node.module}.{a.name}" for a in node.names if a.name != "*"]
    return out


def _read(project: ProjectFiles, relpath: str) -> str | None:
    try:
        return project.read_text(relpath)
    except SourceError:
        return None


def readme_lines(text: str, *, markdown: bool) -> list[str]:
    """The lines of a README that may hold commands: in Markdown the code blocks' lines and each inline code
    span, elsewhere every line (reStructuredText's double backquotes removed); continuation lines joined."""
    if not markdown:
        return _joined(text.replace("``", " ").splitlines())
    out: list[str] = []
    for tok in _markdown_tokens(text):
        if tok.type in ("fence", "code_block"):
            out += _joined(tok.content.splitlines())
        elif tok.type == "inline":
            out += [child.content for child in tok.children or () if child.type == "code_inline"]
    return out


def readme_blocks(text: str, *, markdown: bool) -> list[list[str]]:
    """:func:`readme_lines` grouped by code block (each inline code span a block of its own; the whole text one
    block outside Markdown): a ``cd`` holds until its block ends (:func:`block_scripts`)."""
    return [block for _heading, block in readme_sections(text, markdown=markdown)]


def readme_sections(text: str, *, markdown: bool) -> list[tuple[str, list[str]]]:
    """(the headings above it from level 2 down, lowercased and joined by `` / ``; ``""`` before any), block) for
    each block of :func:`readme_blocks` (a level-1 heading is the title, left out)."""
    if not markdown:
        return [("", readme_lines(text, markdown=False))]
    out: list[tuple[str, list[str]]] = []
    path: dict[int, str] = {}  # heading level -> its text, for the headings above the current point
    level = 0
    for tok in _markdown_tokens(text):
        if tok.type == "heading_open":
            level = int(tok.tag[1:]) if tok.tag[1:].isdigit() else 6
        elif tok.type == "heading_close":
            level = 0
        elif tok.type in ("fence", "code_block"):
            out.append((" / ".join(path[k] for k in sorted(path)), _joined(tok.content.splitlines())))
        elif tok.type == "inline":
            if level:  # a heading's own code spans count too, under that heading
                path = {k: v for k, v in path.items() if k < level}
                if level > 1:
                    path[level] = tok.content.lower()
            heading = " / ".join(path[k] for k in sorted(path))
            out += [(heading, [child.content]) for child in tok.children or () if child.type == "code_inline"]
    return out


def block_scripts(lines: Iterable[str], py_files: Collection[str], read_shell=None, depth: int = 0) -> list[str]:
    """Project scripts the shell lines run, in order, following ``cd DIR`` (issue 23): ``cd pkg`` then
    ``python train.py`` runs ``pkg/train.py``, ``cd ../..`` comes back. A ``cd`` out of the project, to ``~``, to
    a variable (``cd $ROOT``) or to a folder the project lacks makes the lines after it name nothing until a
    ``cd`` back to a known folder; a bare ``cd`` goes home (out of the project)."""
    out: dict[str, None] = {}
    state = {"cwd": ""}
    for line in lines:
        for rel in command_scripts(line, py_files, read_shell, depth, state):
            out.setdefault(rel, None)
    return list(out)


def _cd(tokens: list[str], state: dict, py_files: Collection[str]) -> None:
    """Apply ``cd X`` to ``state["cwd"]`` (None: somewhere outside the project, or unknown)."""
    target = tokens[1] if len(tokens) > 1 else "~"
    cwd = state.get("cwd")
    if target.startswith(("~", "/", "$", "-")) or cwd is None and not target.startswith(".."):
        state["cwd"] = None
        return
    rel = posixpath.normpath(posixpath.join(cwd or "", target)) if cwd is not None else None
    if rel is None or rel.startswith(".."):
        state["cwd"] = None
        return
    rel = "" if rel == "." else rel

    def known(d: str) -> bool:
        return not d or any(p.startswith(d + "/") for p in py_files)

    if cwd == "" and not known(rel):
        # `git clone .../Proj.git && cd Proj[/sub]`: the first folder is the clone, the project root itself
        rest = rel.split("/", 1)[1] if "/" in rel else ""
        rel = rest if not known(rel.split("/", 1)[0]) and known(rest) else rel
    state["cwd"] = rel if known(rel) else None


def _joined(lines: Iterable[str]) -> list[str]:
    out: list[str] = []
    pending = ""
    for line in lines:
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        out.append(pending + line)
        pending = ""
    if pending:
        out.append(pending)
    return out


def command_scripts(line: str, py_files: Collection[str], read_shell=None, depth: int = 0,
                    state: dict | None = None) -> list[str]:
    """Project scripts (members of ``py_files``) that the shell command ``line`` runs; ``read_shell(relpath)``
    gives a shell script's text (or None) for ``bash X.sh``. A line that does not split (an open quote) runs
    nothing. ``state`` carries the working directory (``{"cwd": "pkg"}``) that a ``cd`` on this or an earlier
    line of the block set (:func:`block_scripts`); paths are resolved from it."""
    state = {"cwd": ""} if state is None else state
    if not any(w in line for w in _WORDS) and "cd" not in line:
        return []
    try:
        lex = shlex.shlex(line, posix=True, punctuation_chars=True)
        lex.whitespace_split = True
        tokens = list(lex)
    except ValueError:
        return []
    out: list[str] = []
    command: list[str] = []
    for tok in [*tokens, ";"]:
        if tok in _COMMAND_ENDS or (tok and set(tok) <= set("();<>|&")):
            if command and command[0] == "cd":
                _cd(command, state, py_files)
            elif command and state.get("cwd") is not None:
                out += _one_command(command, _Under(py_files, state["cwd"]), read_shell, depth)
            command = []
        else:
            command.append(tok)
    return list(dict.fromkeys(out))


_FULL = "\x00full:"


class _Under:
    """The project's files as seen from the folder ``cwd``: ``"train.py" in _Under(py, "pkg")`` asks for
    ``pkg/train.py``; :meth:`full` gives the project path back (a module name resolves from ``cwd`` first)."""

    def __init__(self, py: Collection[str], cwd: str) -> None:
        self.py, self.cwd = py, cwd

    def full(self, rel: str) -> str:
        return posixpath.normpath(posixpath.join(self.cwd, rel)) if self.cwd else rel

    def __contains__(self, rel: object) -> bool:
        return isinstance(rel, str) and self.full(rel) in self.py

    def __iter__(self):
        return iter(self.py)

    def __len__(self) -> int:
        return len(self.py)


def _one_command(tokens: list[str], under: _Under, read_shell, depth: int) -> list[str]:
    # a path a shell script named comes back marked (_FULL): it is a project path already
    return [rel[len(_FULL):] if rel.startswith(_FULL) else under.full(rel)
            for rel in _command(tokens, under, read_shell, depth)]


def _command(tokens: list[str], py: _Under, read_shell, depth: int) -> list[str]:
    for i, tok in enumerate(tokens):
        name = PurePosixPath(tok).name
        if tok == "uv" and tokens[i + 1:i + 2] == ["run"] and not any(
                _python_name(PurePosixPath(t).name) or PurePosixPath(t).name in _LAUNCHERS for t in tokens[i + 2:]):
            return _python_args(tokens[i + 2:], py)  # `uv run -m pkg.cli`, `uv run app.py`: uv starts Python itself
        if name in ("python", "python2", "python3", "py") or (
                name.startswith("python") and name[6:].replace(".", "").isdigit()):  # python3.11
            return _python_args(tokens[i + 1:], py)
        if name in _LAUNCHERS:
            return _launched(tokens[i + 1:], py)
        if name in _SHELLS or tok.endswith(".sh"):
            script = tok if tok.endswith(".sh") else next((t for t in tokens[i + 1:] if not t.startswith("-")), "")
            rel = _relative(script)
            if depth or rel is None or read_shell is None or not rel.endswith(".sh"):
                return []
            text = read_shell(py.full(rel))
            if text is None:
                return []
            # a script's own commands run from the same folder; their paths are already full project paths
            inner = {"cwd": py.cwd}
            return [_FULL + s for ln in _joined(text.splitlines())
                    for s in command_scripts(ln, py.py, None, depth + 1, inner)]
    return []


def _python_name(name: str) -> bool:
    return name in ("python", "python2", "python3", "py") or (
        name.startswith("python") and name[6:].replace(".", "").isdigit())


def _python_args(args: list[str], py: Collection[str]) -> list[str]:
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-c":
            return []  # inline code runs no script
        if a == "-m":
            hit = _module_file(args[i + 1], py) if i + 1 < len(args) else None
            if hit or i + 1 >= len(args) or args[i + 1] not in _LAUNCH_MODULES:
                return [hit] if hit else []  # python -m pytest tests/test_x.py runs the tests, not a main entry
            return _launched(args[i + 2:], py)  # python -m torch.distributed.launch ... train.py
        if a in _PY_OPTS_WITH_ARG:
            i += 2
            continue
        if a.startswith("-"):
            i += 1
            continue
        rel = _relative(a)
        return [rel] if rel is not None and rel in py else []
    return []


def _launched(args: list[str], py: Collection[str]) -> list[str]:
    """The script a launcher (torchrun, accelerate launch, deepspeed) starts: its -m/--module target or
    the first of its arguments that is a project script."""
    for i, a in enumerate(args):
        if a in ("-m", "--module") and i + 1 < len(args):
            hit = _module_file(args[i + 1], py)
            if hit:
                return [hit]
        rel = _relative(a)
        if rel is not None and rel in py:
            return [rel]
    return []


def _relative(token: str) -> str | None:
    if not token or PurePosixPath(token).is_absolute() or "=" in token:
        return None
    rel = posixpath.normpath(token)
    return None if rel.startswith("..") else rel


def _module_file(module: str, py: Collection[str]) -> str | None:
    """The project file that ``python -m module`` (or an entry point ``module:func``) runs, or None."""
    base = module.split(":")[0].strip().replace(".", "/")
    if not base or base.startswith("/"):
        return None
    for cand in (f"{base}.py", f"{base}/__main__.py", f"src/{base}.py", f"src/{base}/__main__.py",
                 f"{base}/__init__.py", f"src/{base}/__init__.py"):
        if cand in py:
            return cand
    return None


def console_modules(project: ProjectFiles) -> list[str]:
    """``module:function`` targets of the project's console (and GUI) scripts, as declared."""
    return [target for _name, target in console_scripts(project)]


def console_scripts(project: ProjectFiles) -> list[tuple[str, str]]:
    """(command name, ``module:function``) of the project's console (and GUI) scripts, as declared."""
    from mpsready.scan.sources import tomlfile

    out: list[tuple[str, str]] = []
    text = _read(project, "pyproject.toml")
    if text is not None:
        data = tomlfile.read(text).doc or {}  # the parse the declaration reader made (bounded; never raises)
        proj = data.get("project")
        if not isinstance(proj, dict):
            proj = {}
        for key in ("scripts", "gui-scripts"):
            table = proj.get(key)
            if isinstance(table, dict):
                out += [(str(k), v) for k, v in table.items() if isinstance(v, str)]
        poetry = data.get("tool", {}).get("poetry", {}) if isinstance(data.get("tool"), dict) else {}
        if isinstance(poetry, dict) and isinstance(poetry.get("scripts"), dict):
            out += [(str(k), v) for k, v in poetry["scripts"].items() if isinstance(v, str)]
    text = _read(project, "setup.cfg")
    if text is not None:
        from mpsready.scan.sources.setup_cfg import read_config

        try:  # read_config: configparser after the lines its regex is super-linear on are blanked
            spec = read_config(text).get("options.entry_points", "console_scripts", fallback="")
        except configparser.Error:
            spec = ""
        out += [(ln.split("=", 1)[0], ln.split("=", 1)[1]) for ln in spec.splitlines() if "=" in ln]
    text = _read(project, "setup.py")
    if text is not None:
        out += _setup_py_scripts(text)
    return [(name.strip(), target.strip()) for name, target in out]


def _quiet_parse(text: str) -> ast.Module:
    """``ast.parse`` without the SyntaxWarnings CPython prints for odd literals (``1_a``, invalid escapes) of
    the project's text, which would reach the user's terminal; raises what ``ast.parse`` raises."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text)


def _setup_py_scripts(text: str) -> list[tuple[str, str]]:
    try:
        tree = _quiet_parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    out: list[tuple[str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _call_name(node.func) == "setup":
            for kw in node.keywords:
                if kw.arg == "entry_points" and isinstance(kw.value, ast.Dict):
                    for k, v in zip(kw.value.keys, kw.value.values):
                        if isinstance(k, ast.Constant) and k.value in ("console_scripts", "gui_scripts"):
                            out += [(s.split("=", 1)[0], s.split("=", 1)[1]) for s in _strings(v) if "=" in s]
    return out


def _call_name(func: ast.AST) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _strings(node: Any) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def readme_api_flags(findings: list, declared: DeclaredEntries) -> list:
    """A ``device="cuda"`` default (API103 with ``default_of``) of a function the README shows users importing
    (sam2's ``build_sam2(config, ckpt, device="cuda")``) is an argument the user passes, like a flag: its remedy
    becomes ``build_sam2(..., device='mps')`` (as for CLIP's ``load``), unless the call sites already lowered it."""
    from mpsready.findings import Severity

    if not declared.api_names:
        return findings
    names = set(declared.api_names)
    out = []
    for f in findings:
        ev = f.evidence or {}
        fn, param = ev.get("default_of"), ev.get("parameter")
        if f.code == "API103" and fn in names and param and not ev.get("method") and f.severity is not Severity.INFO:
            flag = f"{fn}(..., {param}='mps')"
            f = replace(f, message=f"{f.message}; the README's code calls {fn}(): pass {param}='mps' on a Mac"
                        ).with_evidence({**ev, "argument": flag})
        out.append(f)
    return out

