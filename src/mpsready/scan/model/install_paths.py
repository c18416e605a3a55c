"""Install paths a Mac never takes (issue 32, item 3; round 12): a container's environment and a platform's lock.

Two kinds of declaration pin what *another* platform installs, not what a Mac installs:

- **A container's files** (a requirement or environment file in a ``docker/``, ``.devcontainer/`` or ``container/``
  folder): the image is a Linux install, usually on an NVIDIA base image; a Mac installs the project's own
  declarations (``setup.py``, ``pyproject.toml``, the root ``requirements.txt``). A ``conda env export`` of a
  linux-64 machine kept beside a Dockerfile (build strings, ``cudatoolkit``) cannot even be created on a Mac. Its
  findings are optional (``evidence.optional``, their own outlook line), unless the README's install names the
  file (``conda env create -f docker/environment.yml``), or the project declares nothing outside container folders
  and lock files (a project shipped only as an image: the container *is* its install path), or the README installs
  only files whose dependencies the scan did not read (a ``conda create --file`` list): the cautious answer.
- **A lock file** (``uv.lock``, ``poetry.lock``, ``pdm.lock``, ``pylock.toml``, ``Pipfile.lock``): it pins the
  wheels a resolver chose, for the platforms and indexes it was run with (a ``+cu126`` torch from the CUDA index);
  on a Mac the resolver picks the macOS wheels of the same packages from the declaration (uv: ``uv lock`` again
  once the Linux-only index is marked; pip: the declaration itself). What the project *requires* is in its
  declaration, judged on its own: a CUDA-only package it declares (``flash-attn`` in ``pyproject.toml``) still
  limits. The same guard applies: a project with no declaration beside its lock keeps the lock's findings.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import PurePosixPath

from mpsready.scan.model.graph import platform_manifest
from mpsready.scan.sources.dockerfile import CONTAINER_DIRS, is_dockerfile

# the lock names the declaration sources read, plus conda-lock's and pixi's (should a source read them)
LOCK_NAMES = frozenset(("uv.lock", "poetry.lock", "pdm.lock", "pylock.toml", "Pipfile.lock", "pixi.lock",
                        "conda-lock.yml", "conda-lock.yaml"))


def lock_file(path: str) -> bool:
    """A lock file by its name (those :mod:`mpsready.scan.sources.lockfiles` reads; conda-lock's, pixi's)."""
    name = PurePosixPath(path).name
    return name in LOCK_NAMES or (name.startswith("pylock.") and name.endswith(".toml")) \
        or name.endswith((".conda-lock.yml", ".conda-lock.yaml"))


def container_file(path: str) -> bool:
    """A Dockerfile, or a file in a container folder (``docker/environment.yml``, ``.devcontainer/requirements.txt``)."""
    parts = PurePosixPath(path).parts
    return is_dockerfile(path) or any(part.lower() in CONTAINER_DIRS for part in parts[:-1])


def manifest(path: str) -> bool:
    """A file that declares the project's dependencies (not a notebook's or a shell script's installs)."""
    name = PurePosixPath(path).name
    return name in ("setup.py", "setup.cfg", "pyproject.toml", "Pipfile") or platform_manifest(path)


def other_platform(path: str, installs: Collection[str] | None, declarations: Collection[str]) -> str | None:
    """Why a declaration at ``path`` is not what a Mac installs (the ``evidence.optional`` text), or None when it
    is (see the module doc). ``installs``: the files the README's install names (None: no install shown);
    ``declarations``: the files that declared at least one dependency read."""
    if installs is not None and path in installs:
        return None
    own = [d for d in declarations if not lock_file(d) and not container_file(d) and manifest(d)]
    if not own:
        return None  # nothing else declares the project: this file is its install path
    if installs and not any(named in declarations for named in installs):
        # the README installs files whose dependencies were not read (a `conda create --file` list): what the main
        # install requires is unknown, and this file is the evidence left (the cautious answer)
        return None
    if lock_file(path):
        first = ", ".join(sorted(own, key=lambda d: (d.count("/"), d))[:2])
        return f"{path} pins one platform's wheels; a Mac installs {first} with its own wheels of the same packages"
    if container_file(path) and not is_dockerfile(path):
        return f"{path} sets up the container image (a Linux install), not what a Mac installs"
    return None
