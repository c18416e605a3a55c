"""Which files of the project go into the kit: the code only, never data.

A file goes in when the scan would read it as code or as a declaration (``mpsready.scan.walker.classify``: Python,
CUDA sources, ``setup.py``, requirement and config files), or it is a C/C++ source or header, a README or a
licence. Everything else is left out with its reason, checked in this order:

* ``tool folder``: version control, caches and virtual environments (``scan.walker.SKIP_DIRS``);
* ``.gitignore``: what the project's ``.gitignore`` files ignore (git's rules through ``pathspec``, read as the
  scan reads them; git itself is never run in the project);
* ``data folder``: a folder named like a data, checkpoint or output folder (:data:`DATA_DIRS`);
* ``credentials``: a file named like a key or an environment file (:data:`SECRET_NAMES`);
* ``data extension``: tables, arrays, checkpoints, images, audio, archives (:data:`DATA_EXTS`);
* ``notebook``: a notebook keeps its cells' outputs, which may hold data;
* ``size``: a code file above :data:`MAX_CODE_BYTES`;
* ``not code``: any other file (not code or a declaration the Mac run needs);
* ``link``: a symbolic link (its target may lie outside the project), ``unreadable``: not a regular file.

A left-out folder is listed once, with the number of files under it, so a data set of a million files is one
line. Nothing is read but the ``.gitignore`` files; nothing is imported or executed.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import Any

from mpsready.scan.walker import SKIP_DIRS, classify

MAX_CODE_BYTES = 1 << 20  # 1 MiB: a larger "code" file is generated or holds data
DATA_DIRS = frozenset({"data", "datasets", "dataset", "checkpoints", "checkpoint", "ckpt", "ckpts", "weights",
                       "pretrained", "outputs", "output", "runs", "logs", "wandb", "mlruns", "lightning_logs",
                       "results", "cache", "raw", "processed"})
DATA_EXTS = frozenset({
    ".csv", ".tsv", ".parquet", ".feather", ".arrow", ".jsonl", ".ndjson", ".npy", ".npz", ".pt", ".pth", ".ckpt",
    ".safetensors", ".bin", ".h5", ".hdf5", ".pkl", ".pickle", ".joblib", ".onnx", ".tfrecord", ".mat", ".nii",
    ".dcm", ".db", ".sqlite", ".sqlite3", ".lmdb", ".mdb", ".zip", ".tar", ".gz", ".tgz", ".bz2", ".xz", ".7z",
    ".png", ".jpg", ".jpeg", ".gif", ".bmp", ".tif", ".tiff", ".webp", ".wav", ".mp3", ".flac", ".ogg", ".mp4",
    ".avi", ".mov", ".mkv", ".xlsx", ".xls", ".txt.gz", ".idx", ".dat", ".raw", ".vocab", ".model", ".tokenizer"})
SECRET_NAMES = frozenset({".env", ".envrc", ".netrc", ".pypirc", "id_rsa", "id_ed25519", "credentials",
                          "credentials.json", "secrets.json", "secrets.yaml", "secrets.yml"})
SECRET_EXTS = frozenset({".pem", ".key", ".p12", ".pfx", ".keystore"})
CODE_EXTS = frozenset({".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".cuh", ".mm", ".m", ".metal"})
DOC_NAMES = ("readme", "license", "licence", "copying", "notice")


@dataclass(frozen=True)
class KitFile:
    relpath: str  # POSIX, relative to the project root
    abspath: str
    size: int


@dataclass(frozen=True)
class LeftOut:
    relpath: str  # a folder ends with "/"
    reason: str  # one of the kinds in the module docstring
    detail: str
    files: int = 1  # files under a left-out folder
    size: int | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"path": self.relpath, "reason": self.reason, "detail": self.detail}
        if self.relpath.endswith("/"):
            d["files"] = self.files
        if self.size is not None:
            d["bytes"] = self.size
        return d


@dataclass
class Selection:
    root: str
    files: list[KitFile] = field(default_factory=list)
    left_out: list[LeftOut] = field(default_factory=list)


def _ext(name: str) -> str:
    low = name.lower()
    if low.endswith(".txt.gz"):
        return ".txt.gz"
    return os.path.splitext(low)[1]


def file_reason(relpath: str, size: int) -> tuple[str, str] | None:
    """``(reason, detail)`` when the file stays home, ``None`` when it goes into the kit (module docstring)."""
    name = relpath.rsplit("/", 1)[-1]
    ext = _ext(name)
    low = name.lower()
    if low in SECRET_NAMES or ext in SECRET_EXTS or low.startswith(".env."):
        return "credentials", f"{name} is named like a key or an environment file"
    if ext in DATA_EXTS:
        return "data extension", f"{ext} files hold data, tensors or media"
    if ext == ".ipynb":
        return "notebook", "a notebook keeps its cells' outputs, which may hold data"
    kinds = classify(relpath)
    code = any(kinds.values()) or ext in CODE_EXTS or low.split(".")[0] in DOC_NAMES
    if not code:
        return "not code", f"not code or a declaration file ({ext or 'no extension'})"
    if size > MAX_CODE_BYTES:
        return "size", f"{size} bytes, above the {MAX_CODE_BYTES}-byte limit for a code file"
    return None


MAX_COUNTED = 200_000  # files counted under one left-out folder; a larger data set is listed as "at least"


def _count(path: str) -> tuple[int, int]:
    """Files and bytes under a left-out folder (links not followed), counted up to :data:`MAX_COUNTED` files."""
    n = total = 0
    for dirpath, _dirs, names in os.walk(path):
        if n >= MAX_COUNTED:
            break
        for nm in names:
            n += 1
            try:
                total += os.lstat(os.path.join(dirpath, nm)).st_size
            except OSError:
                pass
    return n, total


def _gitignore(dirpath: str):
    path = os.path.join(dirpath, ".gitignore")
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_CODE_BYTES:
        return None
    import pathspec  # only a tree with a .gitignore loads it

    with open(path, "rb") as fh:
        lines = fh.read().decode("utf-8", errors="replace").splitlines()
    good = []
    for line in lines:
        try:
            pathspec.GitIgnoreSpec.from_lines([line])
        except Exception:  # pathspec's pattern error: git ignores such a line too
            continue
        good.append(line)
    return pathspec.GitIgnoreSpec.from_lines(good)


def _ignored(ignores: list, rel: str, is_dir: bool) -> bool:
    verdict = False
    for base, spec in ignores:
        sub = rel[len(base) + 1:] if base else rel
        res = spec.check_file(sub + "/" if is_dir else sub)
        if res.include is not None:
            verdict = res.include
    return verdict


def select(root: str | os.PathLike[str]) -> Selection:
    """The project's files under ``root``, split into what goes into the kit and what stays home."""
    root = os.path.abspath(root)
    out = Selection(root)
    stack: list[tuple[str, str, list]] = [(root, "", [])]
    while stack:
        dirpath, rel, ignores = stack.pop()
        spec = _gitignore(dirpath)
        if spec is not None:
            ignores = ignores + [(rel, spec)]
        try:
            entries = sorted(os.scandir(dirpath), key=lambda e: e.name, reverse=True)
        except OSError as exc:
            out.left_out.append(LeftOut((rel or ".") + "/", "unreadable", exc.strerror or str(exc)))
            continue
        for entry in entries:
            child = f"{rel}/{entry.name}" if rel else entry.name
            _one(out, entry, child, ignores, stack)
    out.files.sort(key=lambda f: f.relpath)
    out.left_out.sort(key=lambda x: x.relpath)
    return out


def _one(out: Selection, entry: os.DirEntry, child: str, ignores: list, stack: list) -> None:
    if entry.is_symlink():
        out.left_out.append(LeftOut(child, "link", "a symbolic link: its target may lie outside the project"))
        return
    is_dir = entry.is_dir(follow_symlinks=False)
    if is_dir:
        why = None
        if entry.name in SKIP_DIRS or entry.name.endswith(".egg-info") or \
                os.path.exists(os.path.join(entry.path, "pyvenv.cfg")):
            why = ("tool folder", "version control, cache or virtual environment")
        elif ignores and _ignored(ignores, child, True):
            why = (".gitignore", "ignored by the project's .gitignore")
        elif entry.name.lower() in DATA_DIRS:
            why = ("data folder", f"a folder named {entry.name!r} holds data, checkpoints or outputs")
        if why:
            n, total = _count(entry.path)
            detail = why[1] + (f" (counted up to {MAX_COUNTED} files)" if n >= MAX_COUNTED else "")
            out.left_out.append(LeftOut(child + "/", why[0], detail, n, total))
        else:
            stack.append((entry.path, child, ignores))
        return
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError as exc:
        out.left_out.append(LeftOut(child, "unreadable", exc.strerror or str(exc)))
        return
    if not stat.S_ISREG(st.st_mode):
        out.left_out.append(LeftOut(child, "unreadable", "not a regular file"))
        return
    if ignores and _ignored(ignores, child, False):
        out.left_out.append(LeftOut(child, ".gitignore", "ignored by the project's .gitignore", size=st.st_size))
        return
    reason = file_reason(child, st.st_size)
    if reason:
        out.left_out.append(LeftOut(child, reason[0], reason[1], size=st.st_size))
    else:
        out.files.append(KitFile(child, entry.path, st.st_size))

