"""Install commands inside shell text: ``pip install``, ``python -m pip install``, ``conda/mamba install``.

Shared by shell scripts, Dockerfile ``RUN`` lines and notebook ``!pip`` / ``%pip`` lines. Words are
split with :mod:`shlex` (a shell lexer), commands at ``&&``, ``||``, ``;`` and ``|``.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from mpsready.scan.sources import pip_options
from mpsready.scan.sources.interface import MAX_LINE, line_guard, long_line_finding
from mpsready.scan.sources.interface import Dependency, DependencySource, ProjectFiles, SourceResult
from mpsready.findings import Severity
from mpsready.scan.rules import deps as D
from mpsready.scan.sources.interface import RawFinding
from mpsready.scan.sources.pep508 import add_requirement, add_wheel_url

_SEPARATORS = {"&&", "||", ";", "|", "&"}
_PIP_VALUE_OPTIONS = {"-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-t", "--target",
                      "--prefix", "--root", "--platform", "--python-version", "--implementation", "--abi",
                      "--no-binary", "--only-binary", "--progress-bar", "--log", "--cache-dir", "--src",
                      "--upgrade-strategy", "--trusted-host", "--proxy", "--timeout", "--retries", "--config-settings",
                      "-C", "--global-option", "--install-option", "--root-user-action", "--report"}
_CONDA_VALUE_OPTIONS = {"-n", "--name", "-p", "--prefix", "--file", "--solver"}


_LEXED = set("'\"\\#")  # characters only shlex handles right; lines without them split the same with str.split


def _plain_words(text: str) -> list[str]:
    """What shlex (posix, ``punctuation_chars=";&|"``) gives for a line without quotes, escapes or comments:
    whitespace-separated words, with each run of ``;&|`` a word of its own. shlex reads one character at a
    time in Python (a 4 MB Dockerfile took 30 s); this is str.split plus one pass over the separators."""
    out: list[str] = []
    for word in text.split():
        if not (";" in word or "&" in word or "|" in word):
            out.append(word)
            continue
        cur, punct = "", None
        for ch in word:
            is_p = ch in ";&|"
            if cur and is_p != punct:
                out.append(cur)
                cur = ""
            cur += ch
            punct = is_p
        if cur:
            out.append(cur)
    return out


_BLANK = " \t\r\n"
_PUNCT = ";&|"


def lex_words(text: str, punctuation: bool = True, comments: bool = True) -> list[str]:
    """The words :mod:`shlex` gives for ``text`` (posix, ``punctuation_chars=";&|"``, ``whitespace_split``,
    ``#`` comments to the end of the line), in time linear in the text: shlex grows each token one character
    at a time, quadratic in a long quoted word (a 1 MB quoted digit run took 12 s). Raises ``ValueError`` for
    an unclosed quote or a trailing backslash, as shlex does. ``punctuation=False, comments=False``: the words of
    ``shlex.split(text)``."""
    punct = _PUNCT if punctuation else ""
    hashes = "#" if comments else ""
    words: list[str] = []
    cur: list[str] = []
    started = False  # a word is open (possibly empty: "" is a word in posix mode)
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in _BLANK:
            if started:
                words.append("".join(cur))
                cur, started = [], False
            i += 1
        elif ch in punct:
            if started:
                words.append("".join(cur))
                cur, started = [], False
            j = i
            while j < n and text[j] in punct:
                j += 1
            words.append(text[i:j])
            i = j
        elif ch in hashes:
            if started:
                words.append("".join(cur))
                cur, started = [], False
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
        elif ch == "'":
            j = text.find("'", i + 1)
            if j < 0:
                raise ValueError("No closing quotation")
            cur.append(text[i + 1:j])
            started = True
            i = j + 1
        elif ch == '"':
            i += 1
            while True:
                q, b = text.find('"', i), text.find("\\", i)
                if q < 0:
                    raise ValueError("No closing quotation")
                if 0 <= b < q:  # inside "...", a backslash escapes only \ and " (shlex's escapedquotes)
                    cur.append(text[i:b])
                    if b + 1 < n and text[b + 1] in '"\\':
                        cur.append(text[b + 1])
                    else:
                        cur.append("\\" + text[b + 1:b + 2])
                    i = b + 2
                    continue
                cur.append(text[i:q])
                i = q + 1
                break
            started = True
        elif ch == "\\":
            if i + 1 >= n:
                raise ValueError("No escaped character")
            cur.append(text[i + 1])
            started = True
            i += 2
        else:
            j = i
            while j < n and text[j] not in _BLANK and text[j] not in punct and text[j] not in hashes and \
                    text[j] not in "'\"\\":
                j += 1
            cur.append(text[i:j])
            started = True
            i = j
    if started:
        words.append("".join(cur))
    return words


def commands(text: str) -> list[list[str]]:
    """Split one shell command line into simple commands (lists of words)."""
    if not _LEXED.intersection(text):
        words = _plain_words(text)
    else:
        try:
            words = lex_words(text)
        except ValueError:
            words = text.split()
    out: list[list[str]] = []
    cur: list[str] = []
    for w in words:
        if w in _SEPARATORS or set(w) <= set(";&|"):
            if cur:
                out.append(cur)
            cur = []
        else:
            cur.append(w)
    if cur:
        out.append(cur)
    return out


def scan_command_line(result: SourceResult, text: str, path: str, line: int | None) -> None:
    """Add the dependencies and index findings of every install command in ``text``."""
    for words in commands(text):
        while words and (("=" in words[0] and not words[0].startswith("-")) or words[0] in ("sudo", "env", "!", "%")):
            words = words[1:]
        if not words:
            continue
        head = PurePosixPath(words[0].lstrip("!%")).name
        if _is_pip(head) and words[1:2] == ["install"]:
            _pip(result, words[2:], path, line)
        elif head.startswith("python") and words[1:4] == ["-m", "pip", "install"]:
            _pip(result, words[4:], path, line)
        elif head in ("uv",) and words[1:3] == ["pip", "install"]:
            _pip(result, words[3:], path, line)
        elif head in ("conda", "mamba", "micromamba") and words[1:2] in (["install"], ["create"]):
            _conda(result, words[2:], path, line)


def _pip(result: SourceResult, args: list[str], path: str, line: int | None) -> None:
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith("-"):
            opt, _, inline = a.partition("=")
            if opt in pip_options.INDEX_OPTIONS:
                value = inline or (args[i + 1] if i + 1 < len(args) else "")
                pip_options.check_index_option(result, path, line, opt, value)
                i += 1 if inline else 2
                continue
            i += 1 if (inline or opt not in _PIP_VALUE_OPTIONS) else 2
            continue
        if "://" not in a and not a.startswith((".", "/", "$", "~")) and not a.endswith((".whl", ".tar.gz", ".zip")):
            add_requirement(result, a, path, line)
        elif a.endswith(".whl") and add_wheel_url(result, a, path, line):
            tag = pip_options.cuda_index_tag(a) if "://" in a else None
            if tag is not None:
                result.findings.append(RawFinding(D.CUDA_WHEEL_INDEX, path, line, f"{a} is a {tag} wheel URL",
                                                  severity=Severity.BLOCKER, evidence={"url": a, "cuda": tag}))
        i += 1


def _is_pip(head: str) -> bool:
    """``pip``, ``pip3``, ``pip3.10`` (a versioned pip script)."""
    return head == "pip" or (head.startswith("pip") and head[3:].replace(".", "").isdigit())


def _conda(result: SourceResult, args: list[str], path: str, line: int | None) -> None:
    from mpsready.scan.sources.conda import conda_channel_finding, conda_spec_name

    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-c", "--channel"):
            if i + 1 < len(args):
                conda_channel_finding(result, args[i + 1], path, line)
            i += 2
            continue
        if a.startswith("-"):
            i += 2 if a in _CONDA_VALUE_OPTIONS else 1
            continue
        name = conda_spec_name(a)
        if name:
            result.dependencies.append(Dependency(name=name, path=path, line=line, ecosystem="conda", raw=a))
        i += 1


class ShellScriptSource(DependencySource):
    name = "shell script"

    def matches(self, relpath: str) -> bool:
        return PurePosixPath(relpath).suffix in (".sh", ".bash")

    def collect(self, relpath: str, text: str, files: ProjectFiles, result: SourceResult | None = None) -> SourceResult:
        result = SourceResult() if result is None else result
        for lineno, line in logical_shell_lines(text):
            if len(line) > MAX_LINE:
                long_line_finding(result, relpath, lineno, len(line))
                continue
            with line_guard(result, relpath, lineno):
                scan_command_line(result, line, relpath, lineno)
        return result


def logical_shell_lines(text: str):
    """(first line number, line) with backslash continuations joined; comment-only lines dropped."""
    buf, start = "", None
    for n, raw in enumerate(text.splitlines(), 1):
        if start is None:
            start = n
        if raw.rstrip().endswith("\\"):
            buf += raw.rstrip()[:-1] + " "
            continue
        buf += raw
        if buf.strip() and not buf.lstrip().startswith("#"):
            yield start, buf.strip()
        buf, start = "", None
    if buf.strip():
        yield start, buf.strip()
