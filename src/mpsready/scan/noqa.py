"""``mpsready scan PATH --add-noqa``: write ``# mpsready: ignore[CODE]`` on every line that has a finding.

The second step of adopting the gate on a CUDA project (the first being a baseline, :mod:`.baseline`): the
known findings become visible, reviewable suppressions in the code, and the gate then fails on anything new.

Where the comment goes is decided with ``tokenize``, never with a regular expression over the source:
- a line that already carries an ``mpsready: ignore[...]`` directive gets the new codes merged into it;
- a line with another comment gets the directive appended to that comment (the suppression reader finds
  ``mpsready:`` anywhere in a comment, :func:`mpsready.scan.code.suppress.parse_suppression`);
- a line that ends inside a multi-line string, or with a backslash continuation, cannot hold a comment: it is
  left alone and listed (``skipped``) with the reason.
Only ``.py`` files under the scanned root are written; notebook cells are listed as skipped. Each file is
rewritten through a temporary file in its folder and ``os.replace``, keeping its mode (and, as root, its owner);
a file with several hard links is refused (replacing it would split the links), and so is a file that
changed since the scan read it.
"""

from __future__ import annotations

import io
import os
import tokenize
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from mpsready.scan.code.suppress import parse_suppression

if TYPE_CHECKING:
    from mpsready.scan.engine import ScanResult


@dataclass
class NoqaResult:
    added: int = 0  # directives written (one per line)
    files: list[str] = field(default_factory=list)
    skipped: list[tuple[str, int | None, str]] = field(default_factory=list)  # (path, line, reason)


def _plan(text: str, lines: dict[int, set[str]]) -> tuple[dict[int, str], dict[int, str]]:
    """(line -> new physical line text without its newline, line -> why it was skipped)."""
    physical = text.splitlines(keepends=True)
    comments: dict[int, tokenize.TokenInfo] = {}
    blocked: dict[int, str] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                comments[tok.start[0]] = tok
            elif tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
                for row in range(tok.start[0], tok.end[0]):
                    blocked[row] = "the line ends inside a multi-line string"
            elif tok.type == getattr(tokenize, "FSTRING_MIDDLE", -1) and tok.end[0] > tok.start[0]:
                for row in range(tok.start[0], tok.end[0]):
                    blocked[row] = "the line ends inside a multi-line f-string"
    except (tokenize.TokenError, SyntaxError, IndentationError) as exc:
        return {}, {line: f"the file does not tokenize ({exc})" for line in lines}
    new: dict[int, str] = {}
    skipped: dict[int, str] = {}
    for line, codes in sorted(lines.items()):
        if line < 1 or line > len(physical):
            skipped[line] = "no such line"
            continue
        body = physical[line - 1].rstrip("\r\n")
        if line in blocked:
            skipped[line] = blocked[line]
            continue
        if body.rstrip().endswith("\\") and line not in comments:
            skipped[line] = "the line continues with a backslash"
            continue
        found = comments.get(line)
        if found is None:
            new[line] = body.rstrip() + f"  # mpsready: ignore[{', '.join(sorted(codes))}]"
            continue
        tok = found
        present = parse_suppression(tok.string)
        if present is not None:
            if "*" in present or codes <= set(present):
                continue  # already silenced
            merged = sorted(set(present) | codes)
            start = tok.string.find("mpsready:")
            head = tok.string[:start]
            rest = tok.string[start:]
            close = rest.find("]")
            tail = rest[close + 1:] if "[" in rest and close >= 0 else rest[len("mpsready: ignore"):]
            comment = f"{head}mpsready: ignore[{', '.join(merged)}]{tail}"
        else:
            comment = tok.string.rstrip() + f"  # mpsready: ignore[{', '.join(sorted(codes))}]"
        new[line] = body[:tok.start[1]] + comment
    return new, skipped


def add_noqa(result: ScanResult) -> NoqaResult:
    """Write the directives for ``result.findings``; returns what was written and skipped. Raises nothing on a
    file that cannot be written: it is listed as skipped with the reason."""
    root = Path(result.root)
    root = root if root.is_dir() else root.parent
    by_file: dict[str, dict[int, set[str]]] = defaultdict(lambda: defaultdict(set))
    out = NoqaResult()
    for f in result.findings:
        path, line = f.location.path, f.location.line
        if not path or not line:
            continue
        if "cell" in (f.evidence or {}) or not path.endswith(".py"):
            out.skipped.append((path, line, "not a Python source file (a notebook cell or a declaration)"))
            continue
        by_file[path][line].add(f.code)
    real_root = os.path.realpath(root)
    for rel, lines in sorted(by_file.items()):
        target = os.path.realpath(root / rel)
        if os.path.commonpath([real_root, target]) != real_root:
            out.skipped += [(rel, line, "outside the scanned folder") for line in lines]
            continue
        try:
            st = os.stat(target, follow_symlinks=False)
            if st.st_nlink > 1:
                out.skipped += [(rel, line, "the file has several hard links; replacing it would split them")
                                for line in lines]
                continue
            raw = Path(target).read_bytes()
            text = raw.decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            out.skipped += [(rel, line, f"cannot read: {exc}") for line in lines]
            continue
        new, skipped = _plan(text, lines)
        out.skipped += [(rel, line, why) for line, why in sorted(skipped.items())]
        if not new:
            continue
        physical = text.splitlines(keepends=True)
        for line, body in new.items():
            ending = physical[line - 1][len(physical[line - 1].rstrip("\r\n")):]
            physical[line - 1] = body + ending
        try:
            _replace(target, "".join(physical).encode("utf-8"), st)
        except OSError as exc:
            out.skipped += [(rel, line, f"cannot write: {exc}") for line in new]
            continue
        out.added += len(new)
        out.files.append(rel)
    return out


def _replace(target: str, data: bytes, st: os.stat_result) -> None:
    import tempfile

    folder = os.path.dirname(target)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".", suffix=".mpsready-tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, st.st_mode & 0o7777)
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            os.chown(tmp, st.st_uid, st.st_gid)
        now = os.stat(target, follow_symlinks=False)
        if (now.st_mtime_ns, now.st_size, now.st_ino) != (st.st_mtime_ns, st.st_size, st.st_ino):
            raise OSError("the file changed while mpsready was writing it; nothing written")
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


__all__ = ["NoqaResult", "add_noqa"]
