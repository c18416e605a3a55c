"""Dockerfile / Containerfile: CUDA base images (FROM) and install commands in RUN lines."""

from __future__ import annotations

from pathlib import PurePosixPath

from mpsready.scan.rules import deps as D
from mpsready.scan.sources.interface import MAX_LINE, line_guard, long_line_finding
from mpsready.scan.sources.interface import DependencySource, ProjectFiles, RawFinding, SourceResult

CUDA_IMAGE_PREFIXES = ("nvidia/cuda", "nvcr.io/nvidia/", "nvidia/", "rapidsai/")


def is_dockerfile(relpath: str) -> bool:
    name = PurePosixPath(relpath).name
    return name in ("Dockerfile", "Containerfile") or name.startswith("Dockerfile.") or name.endswith(".Dockerfile") \
        or name.endswith(".dockerfile")


CONTAINER_DIRS = {"docker", ".docker", ".devcontainer", "container", "containers"}


def is_container_recipe(relpath: str) -> bool:
    """Whether ``relpath`` builds or sets up a container (the CUDA server's environment, not the Mac's): a
    Dockerfile / Containerfile, or a shell script that says so by its place or name (``docker/entrypoint.sh``,
    ``.devcontainer/post_create.sh``, ``build_docker.sh``). Requirements files never are: the Mac installs them."""
    if is_dockerfile(relpath):
        return True
    path = PurePosixPath(relpath)
    if path.suffix not in (".sh", ".bash"):
        return False
    return "docker" in path.stem.lower() or any(part.lower() in CONTAINER_DIRS for part in path.parts[:-1])


def cuda_image(image: str) -> bool:
    low = image.lower()
    if low.startswith(CUDA_IMAGE_PREFIXES):
        return True
    repo, _, tag = low.partition(":")
    return repo in ("pytorch/pytorch", "pytorch/manylinux-builder") and "cuda" in tag


class DockerfileSource(DependencySource):
    name = "Dockerfile"

    def matches(self, relpath: str) -> bool:
        return is_dockerfile(relpath)

    def collect(self, relpath: str, text: str, files: ProjectFiles, result: SourceResult | None = None) -> SourceResult:
        # here: the project model asks is_container_recipe of every scan, which must not load the shell reader
        # and packaging with it (a 1-file scan)
        from mpsready.scan.sources.shell import logical_shell_lines, scan_command_line

        result = SourceResult() if result is None else result
        args: dict[str, str] = {}
        heredoc: str | None = None  # the end marker of a RUN <<EOF body being read
        for lineno, line in logical_shell_lines(text):
            if len(line) > MAX_LINE:
                long_line_finding(result, relpath, lineno, len(line))
                continue
            with line_guard(result, relpath, lineno):
                if heredoc is not None:
                    if line.strip() == heredoc:
                        heredoc = None
                    else:
                        scan_command_line(result, line, relpath, lineno)
                    continue
                word, _, rest = line.partition(" ")
                word = word.upper()
                if word == "ARG":
                    name, eq, value = rest.strip().partition("=")
                    if eq:
                        args[name.strip()] = expand_args(value.strip().strip("\"'"), args)
                elif word == "FROM":
                    image = expand_args(next((w for w in rest.split() if not w.startswith("--")), ""), args)
                    if cuda_image(image):
                        result.findings.append(RawFinding(D.CUDA_DOCKER_IMAGE, relpath, lineno,
                                                          f"base image {image} is a CUDA image", evidence={"image": image}))
                elif word == "RUN":
                    body = rest.strip()
                    if body.startswith("["):  # exec form: RUN ["pip", "install", "x"]
                        import json
                        try:
                            body = " ".join(json.loads(body))
                        except (ValueError, TypeError, RecursionError):  # RecursionError: nested too deeply
                            continue
                    while body.startswith("--"):  # RUN --mount=... flags
                        body = body.partition(" ")[2]
                    if body.startswith("<<"):  # heredoc: RUN <<EOF / RUN <<-'EOF', the commands follow until EOF
                        marker = body[2:].lstrip("-").split()[0].strip("\"'") if body[2:].strip() else ""
                        heredoc = marker or None
                        continue
                    scan_command_line(result, body, relpath, lineno)
        return result


def expand_args(word: str, args: dict[str, str]) -> str:
    """``$NAME``, ``${NAME}`` and ``${NAME:-default}`` replaced by the ARG defaults seen so far (Dockerfile
    reference: variable substitution); an unknown name without a default is left as written."""
    out, i = [], 0
    while i < len(word):
        if word[i] == "$" and i + 1 < len(word):
            if word[i + 1] == "{":
                end = word.find("}", i)
                if end < 0:
                    out.append(word[i:])
                    break
                inner = word[i + 2:end]
                name, sep, default = inner.partition(":-")
                out.append(args.get(name, default if sep else word[i:end + 1]))
                i = end + 1
                continue
            j = i + 1
            while j < len(word) and (word[j].isalnum() or word[j] == "_"):
                j += 1
            name = word[i + 1:j]
            out.append(args.get(name, word[i:j]))
            i = j
            continue
        out.append(word[i])
        i += 1
    return "".join(out)
