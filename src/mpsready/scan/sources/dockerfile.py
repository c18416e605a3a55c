"""Dockerfile / Containerfile: CUDA base images (FROM) and install commands in RUN lines."""

from __future__ import annotations

from pathlib import PurePosixPath

from mpsready.scan.rules import deps as D
from mpsready.scan.sources.interface import DependencySource, ProjectFiles, RawFinding, SourceResult
from mpsready.scan.sources.shell import logical_shell_lines, scan_command_line

CUDA_IMAGE_PREFIXES = ("nvidia/cuda", "nvcr.io/nvidia/", "nvidia/", "rapidsai/")


def is_dockerfile(relpath: str) -> bool:
    name = PurePosixPath(relpath).name
    return name in ("Dockerfile", "Containerfile") or name.startswith("Dockerfile.") or name.endswith(".Dockerfile") \
        or name.endswith(".dockerfile")


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
        result = SourceResult() if result is None else result
        for lineno, line in logical_shell_lines(text):
            word, _, rest = line.partition(" ")
            word = word.upper()
            if word == "FROM":
                image = next((w for w in rest.split() if not w.startswith("--")), "")
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
                scan_command_line(result, body, relpath, lineno)
        return result
