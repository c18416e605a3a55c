"""YAML / Hydra / OmegaConf config values that choose a device, read with PyYAML's composer (node
positions give file lines); nothing in a config is executed.

A config value is a dict ``{"path": "configs/trainer/default.yaml", "line": 7, "key": "trainer.accelerator",
"value": "gpu", "override": "trainer.accelerator=mps" | None}``. Hydra config groups are the
subdirectories of a config root (``configs/trainer/mps.yaml`` is option ``mps`` of group ``trainer``):
when a group already ships an option for the Mac, the override selects it (``trainer=mps``).
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, Iterable

from mpsready.scan.code.astutil import is_cuda_literal

if TYPE_CHECKING:  # yaml is imported where a config is read: a project without YAML files never loads it
    import yaml

DEVICE_KEYS = ("device", "accelerator", "map_location")
_MAC_OPTIONS = ("mps", "mac", "macos", "apple", "cpu_mps")
_CONFIG_DIRS = ("conf", "config", "configs", "configurations", "hydra_configs", "cfg", "cfgs")


def _config_root(relpath: str) -> tuple[str, str | None, str] | None:
    """(root dir, group or None, option name) of a file under a config directory, else None."""
    parts = PurePosixPath(relpath).parts
    for i, p in enumerate(parts[:-1]):
        if p.lower() in _CONFIG_DIRS:
            rest = parts[i + 1:]
            group = "/".join(rest[:-1]) or None
            return "/".join(parts[:i + 1]), group, PurePosixPath(rest[-1]).stem
    return None


def _walk(node: yaml.Node, prefix: tuple[str, ...]) -> Iterable[tuple[tuple[str, ...], yaml.ScalarNode]]:
    import yaml

    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode):
                yield from _walk(v, (*prefix, str(k.value)))
    elif isinstance(node, yaml.ScalarNode):
        yield prefix, node


def string_scalars(text: str, *, sequences: bool) -> Iterable[tuple[tuple[str, ...], yaml.ScalarNode]]:
    """``(key path, node)`` of every non-mapping string scalar of the YAML ``text``, composed with PyYAML's safe
    composer (nothing executed); items of a sequence keep their key's path when ``sequences``, else they are not
    entered. A text that does not compose yields nothing (a broken YAML file is no configuration). The walk keeps an
    explicit stack (hostile nesting never reaches the recursion limit), so its order is last-pushed first; callers that
    keep the first location of a value rely on that order."""
    import yaml

    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except Exception:  # YAMLError, and recursion limits on hostile input
        return
    stack: list[tuple[Any, tuple[str, ...]]] = [(node, ())]
    while stack:
        n, path = stack.pop()
        if isinstance(n, yaml.MappingNode):
            stack.extend((v, (*path, str(k.value))) for k, v in n.value if isinstance(k, yaml.ScalarNode))
        elif sequences and isinstance(n, yaml.SequenceNode):
            stack.extend((v, path) for v in n.value)
        elif isinstance(n, yaml.ScalarNode) and isinstance(n.value, str):
            yield path, n


def _names_cuda(key: str, value: str) -> bool:
    if key in ("device", "map_location"):
        return is_cuda_literal(value)
    # accelerator: gpu and auto resolve to MPS in Lightning >= 1.7 (data/device_choosers.yaml, lightning_accelerator)
    return False


def cuda_values(files: dict[str, str], hydra: bool) -> list[dict[str, Any]]:
    """Config values under a config directory that name a CUDA device, with the override that moves them to
    MPS (Hydra syntax when ``hydra``, else ``None``: the value is edited in the file)."""
    options: dict[tuple[str, str], set[str]] = {}
    for rel in files:
        where = _config_root(rel)
        if where and where[1]:
            options.setdefault((where[0], where[1]), set()).add(where[2])
    out = []
    for rel, text in sorted(files.items()):
        where = _config_root(rel)
        if where is None and PurePosixPath(rel).parent.as_posix() != ".":
            continue
        if "cuda" not in text:
            continue
        import yaml

        try:
            node = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.YAMLError:
            continue  # a broken YAML file is not a config surface; environment files report INP109 themselves
        except Exception:  # recursion limits and other composer failures on hostile input
            continue
        if node is None:
            continue
        global_package = text.lstrip().startswith("# @package _global_")
        for keys, scalar in _walk(node, ()):
            if not keys or not isinstance(scalar.value, str) or not _names_cuda(keys[-1], scalar.value):
                continue
            group = where[1] if where else None
            dotted = ".".join(keys if global_package or not group else (*group.split("/"), *keys))
            override = None
            if hydra:
                mac = sorted(options.get((where[0], group), set()) & set(_MAC_OPTIONS)) if where and group else []
                override = f"{group}={mac[0]}" if mac else f"{dotted}=mps"
            out.append({"path": rel, "line": scalar.start_mark.line + 1, "key": dotted, "value": scalar.value,
                        "override": override})
    return out


def mac_group_options(files: Iterable[str]) -> list[str]:
    """Hydra overrides that select a Mac option a config group already ships (``trainer=mps``)."""
    out = set()
    for rel in files:
        where = _config_root(rel)
        if where and where[1] and where[2] in _MAC_OPTIONS:
            out.add(f"{where[1]}={where[2]}")
    return sorted(out)
