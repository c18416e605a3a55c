"""What a README sets apart from the main work, and the usage code it shows (issue 32): the helpers of
:func:`mpsready.scan.model.entries.declared_entries` that read a README's sections in order.

- **Feature sections.** An install command that comes after the README has run a script and installs a feature's
  requirement file (``requirements+.txt``, ``requirements/eval.txt``) or only packages by name opens a feature section;
  the scripts run from there until an install of the project itself are features (secondary parts), and the files
  installed there are not the main install. A folder whose own requirement file the README installs is a feature
  when the README runs scripts outside it; scripts run only under a heading naming training, evaluation,
  benchmarks or data preparation are features when the README runs others too.
- **Console commands.** A README command that starts with a console script's name runs that module.
- **Usage code.** ``.cuda()`` calls in the README's Python blocks (when they import the project) are edits.
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Callable, Collection, Iterable
from typing import TYPE_CHECKING

from mpsready.scan.model.entries import (_last_cd, _markdown_tokens, _module_file, _quiet_parse, block_scripts,
                                         install_files, readme_sections)

if TYPE_CHECKING:
    from mpsready.scan.model.entries import DeclaredEntries


def read_sections(text: str, markdown: bool, py: Collection[str], read_shell: Callable[[str], str | None],
                  readme: dict[str, None], features: dict[str, None], installs: list[str] | None) -> list[str] | None:
    """Read a README's blocks in order: the scripts of its main sections go to ``readme``, those of its feature
    sections to ``features`` (see the module doc); returns ``installs`` with the main install's files added.

    Long because it keeps the reading state (the last ``cd``, whether a feature section is open, the folders with
    their own requirement file, the headings over each script) over one pass of the blocks."""
    last_dir: str | None = None  # the project folder an earlier block `cd`s into
    in_feature = False  # after a feature's install (see DeclaredEntries.features)
    local: set[str] = set()  # folders whose own requirement file the README installs (`gradio_demo/`)
    headed: dict[str, bool] = {}  # a script -> whether every section that runs it is a feature's heading
    for heading, block in readme_sections(text, markdown=markdown):
        named = install_files(block)
        if named is not None:
            local |= {posixpath.dirname(rel) for rel in named if "/" in rel}
            kind = install_kind(block, named)
            if kind == "feature" and readme:
                in_feature = True
            elif kind == "main":
                in_feature = False
            if not in_feature:
                installs = [*(installs or []), *named]
        found = block_scripts(block, py, read_shell)
        if not found and last_dir is not None:
            # issue 32: a later block that runs `torchrun ... generate.py` after an earlier `cd inference`
            # names a file of that folder when the root has none
            found = block_scripts([f"cd {last_dir}", *block], py, read_shell)
        for rel in found:
            if in_feature and rel not in readme:
                features.setdefault(rel, None)
            elif not in_feature:
                readme.setdefault(rel, None)
            headed[rel] = headed.get(rel, True) and feature_heading(heading)
        last_dir = _last_cd(block, py) or last_dir
    # scripts run only under a training/evaluation/benchmark heading are features when others are run too
    under = [rel for rel in readme if headed.get(rel)]
    if under and len(under) < len(readme):
        for rel in under:
            del readme[rel]
            features.setdefault(rel, None)
    # a folder with its own requirement file is a feature when the README runs scripts outside it too
    inside = [rel for rel in readme if any(rel.startswith(d + "/") for d in local)]
    if inside and len(inside) < len(readme):
        for rel in inside:
            del readme[rel]
            features.setdefault(rel, None)
        if installs:
            installs = [rel for rel in installs if not any(rel.startswith(d + "/") for d in local)]
    return installs


def console_commands(text: str, markdown: bool, scripts: list[tuple[str, str]], py: Collection[str],
                     readme: dict[str, None], features: dict[str, None]) -> None:
    """A README command that starts with a console script's name (``acestep --port 7865``) runs its module: it joins
    ``readme`` unless a feature section runs it."""
    names = dict(scripts)
    for _heading, block in readme_sections(text, markdown=markdown):
        for line in block:
            words = line.split()
            mod = _module_file(names[words[0]], py) if words and words[0] in names else None
            if mod and mod not in features:
                readme.setdefault(mod, None)


def install_kind(lines: Iterable[str], named: list[str]) -> str:
    """What an install block installs: ``"feature"`` when it names a feature's requirement or environment file
    (:func:`~mpsready.scan.model.graph.feature_manifest`: ``requirements+.txt``, ``requirements/eval.txt``) or
    only packages by name (``pip install hydra-core mediapy``), ``"main"`` when it installs the project itself
    (``pip install -e .``, ``python setup.py develop``) or its plain requirement or environment file."""
    from mpsready.scan.model.graph import feature_manifest
    from mpsready.scan.sources.shell import lex_words

    if any(feature_manifest(rel) for rel in named):
        return "feature"
    if named:
        return "main"
    for line in lines:
        try:
            words = lex_words(line)
        except ValueError:
            continue
        if "setup.py" in words and ("install" in words or "develop" in words):
            return "main"
        if "install" in words and any(w == "." or w.startswith((".[", "./", "-e.", "git+", "http")) for w in words):
            return "main"
    return "feature"




def _python_fences(text: str):
    """(first line of the code in the file, code) of each Python fence of a Markdown text (``>>>`` prompts
    stripped, so line numbers still match)."""
    for tok in _markdown_tokens(text):
        if tok.type != "fence" or tok.info.strip().split(" ")[0].lower() not in ("python", "py", "python3", "pycon"):
            continue
        code = "\n".join(line[4:] if line.startswith((">>> ", "... ")) else line for line in tok.content.splitlines())
        yield (tok.map[0] + 2 if tok.map else 1), code


def readme_cuda_calls(text: str) -> list[tuple[int, str]]:
    """(line, source) of each ``x.cuda()`` call in a Markdown README's Python code blocks that no test on CUDA
    guards (``if torch.cuda.is_available():`` or a conditional expression naming ``cuda``). A block that does not
    parse as a whole is read statement by statement (top-level lines only)."""
    out: list[tuple[int, str]] = []
    for first, code in _python_fences(text):
        try:
            trees = [(0, _quiet_parse(code))]
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            trees = []
            for i, line in enumerate(code.splitlines()):
                if line and not line[0].isspace():
                    try:
                        trees.append((i, _quiet_parse(line)))
                    except (SyntaxError, ValueError, RecursionError, MemoryError):
                        continue
        for offset, tree in trees:
            guarded: set[int] = set()
            for node in ast.walk(tree):
                if isinstance(node, (ast.If, ast.IfExp)) and "cuda" in ast.dump(node.test):
                    guarded |= {id(n) for part in (node.body, node.orelse)
                                for sub in (part if isinstance(part, list) else [part]) for n in ast.walk(sub)}
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "cuda" \
                        and id(node) not in guarded:
                    out.append((first + offset + node.lineno - 1, ast.unparse(node)[:80]))
    return sorted(set(out))


def readme_cpu_selections(text: str) -> list[tuple[int, str]]:
    """(line, source) of each CUDA-or-CPU device choice in a Markdown README's Python code blocks (issue 32, round 4):
    a conditional expression whose test calls ``torch.cuda.is_available()``, whose body names a CUDA device and whose
    other side is ``"cpu"`` (``device = "cuda:0" if torch.cuda.is_available() else "cpu"``). A Mac following that
    usage runs on the CPU. Blocks that do not parse as a whole are left out."""
    out: list[tuple[int, str]] = []
    for first, code in _python_fences(text):
        try:
            tree = _quiet_parse(code)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.IfExp):
                continue
            test = ast.unparse(node.test)
            body, other = _device_text(node.body), _device_text(node.orelse)
            if "cuda.is_available" in test and "mps" not in test and body is not None and body.startswith("cuda") \
                    and other == "cpu":
                out.append((first + node.lineno - 1, ast.unparse(node)[:80]))
    return sorted(set(out))


def _device_text(node: ast.expr) -> str | None:
    """The device string of ``"cuda:0"`` or ``torch.device("cuda:0")``, else None."""
    if isinstance(node, ast.Call) and node.args and not node.keywords:
        node = node.args[0]
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def readme_usage_findings(declared: "DeclaredEntries") -> list:
    """API101 for each ``.cuda()`` call in the README's usage code (its Python blocks that import the project: the
    documented way to use a library): a Mac user who follows it gets 'Torch not compiled with CUDA enabled', so
    the usage needs an edit to ``.to(device)`` with ``mps`` (a ``device="cuda"`` value in such code is an argument
    the user sets, not counted here)."""
    from mpsready.findings import Basis, Finding, Location, Scope
    from mpsready.scan.rules import api as A

    return [Finding(A.DOT_CUDA.code, A.DOT_CUDA.severity,
                    f"the README's usage code calls {call}: a Mac following it fails (no CUDA)",
                    Location(path, line), Basis.PREDICTED, "Edit the usage to .to(device) with device 'mps' on a Mac.",
                    A.DOT_CUDA.source, Scope.MAIN, {"readme_usage": True})
            for path, line, call in declared.usage_cuda] + [
        # issue 32, round 4: the usage's device line keeps a Mac on the CPU (parler-tts's `"cuda:0" if ... else "cpu"`)
        Finding(A.DEVICE_SELECTION.code, A.DEVICE_SELECTION.severity,
                f"the README's usage code picks {choice}: a Mac following it runs on the CPU, never on MPS",
                Location(path, line), Basis.PREDICTED, "Edit the usage's device line to pick 'mps' when "
                "torch.backends.mps.is_available().", A.DEVICE_SELECTION.source, Scope.MAIN, {"readme_usage": True})
        for path, line, choice in declared.usage_cpu]




# words of a README heading over a part of the work apart from using the project (issue 32): the scripts run only
# under such headings are secondary parts when the README runs other scripts too
_FEATURE_HEADINGS = ("train", "fine-tun", "finetun", "evaluat", "benchmark", "reproduc", "preprocess",
                     "data prep", "dataset prep", "prepare data", "prepare the data", "ablation")


def feature_heading(heading: str) -> bool:
    """Whether a README heading names training, evaluation, benchmarks or data preparation."""
    return any(w in heading for w in _FEATURE_HEADINGS)


