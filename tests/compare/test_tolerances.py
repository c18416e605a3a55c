"""Tolerance defaults and precedence."""

from __future__ import annotations

import pytest

from mpsready.compare.tolerances import (DTYPE_DEFAULTS, build_spec, default_tolerance, find_pyproject, load_config,
                                         parse_cli_pattern)
from mpsready.errors import UsageError


def test_defaults_are_torch_assert_close_values():
    # torch/testing/_comparison.py, PyTorch 2.13.0, _DTYPE_PRECISIONS
    assert DTYPE_DEFAULTS["float16"] == (1e-3, 1e-5)
    assert DTYPE_DEFAULTS["bfloat16"] == (1.6e-2, 1e-5)
    assert DTYPE_DEFAULTS["float32"] == (1.3e-6, 1e-5)
    assert DTYPE_DEFAULTS["float64"] == (1e-7, 1e-7)
    t = default_tolerance("float32", "bfloat16")
    assert (t.rtol, t.atol) == (1.6e-2, 1e-5)
    assert (default_tolerance("int64").rtol, default_tolerance("int64").atol) == (0.0, 0.0)


def test_defaults_match_installed_torch():
    torch = pytest.importorskip("torch")
    from torch.testing._comparison import _DTYPE_PRECISIONS

    for name in ("float16", "bfloat16", "float32", "float64", "complex64", "complex128"):
        assert DTYPE_DEFAULTS[name] == _DTYPE_PRECISIONS[getattr(torch, name)]


def test_precedence_cli_pattern_then_config_pattern_then_cli_global_then_config_global_then_default():
    config = {"rtol": 1e-3, "atol": 1e-4, "tolerances": {"grad:*": [1e-2, 1e-3], "grad:fc1.*": {"rtol": 0.5,
                                                                                              "atol": 0.25}}}
    spec = build_spec(config, "pyproject.toml", ["grad:fc1.weight=7e-1,7e-2", "activation:*=1,2",
                                                  "activation:fc2*=3,4"], rtol=5e-5, atol=None)
    t = spec.resolve("grad:fc1.weight", "float32")
    assert (t.rtol, t.atol, t.source) == (0.7, 0.07, "--tolerance grad:fc1.weight")
    t = spec.resolve("grad:fc1.bias", "float32")
    assert (t.rtol, t.atol, t.source) == (0.5, 0.25, "pyproject.toml grad:fc1.*")  # last match wins
    t = spec.resolve("grad:head.bias", "float32")
    assert (t.rtol, t.atol) == (1e-2, 1e-3)
    t = spec.resolve("activation:fc2#0", "float32")
    assert (t.rtol, t.atol) == (3.0, 4.0)  # the later of two matching CLI patterns
    t = spec.resolve("param:fc1.weight", "float32")
    assert (t.rtol, t.atol, t.source) == (5e-5, 1e-4, "--rtol/--atol")  # --rtol only replaces rtol
    t = build_spec(config).resolve("param:x", "float32")
    assert (t.rtol, t.atol, t.source) == (1e-3, 1e-4, "pyproject.toml [tool.mpsready.compare]")
    t = build_spec({}).resolve("param:x", "float64")
    assert (t.rtol, t.atol) == (1e-7, 1e-7)


@pytest.mark.parametrize("text", ["grad:*", "grad:*=1", "=1,2", "grad:*=a,b", "grad:*=-1,0", "x=1,inf"])
def test_bad_cli_patterns(text):
    with pytest.raises(UsageError):
        parse_cli_pattern(text)


def test_pyproject_loading(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text(
        '[tool.mpsready.compare]\nrtol = 1e-4\nk = 3\n[tool.mpsready.compare.tolerances]\n"loss*" = [1e-3, 0]\n')
    sub = tmp_path / "src" / "pkg"
    sub.mkdir(parents=True)
    found = find_pyproject(sub)
    assert found == tmp_path / "pyproject.toml"
    cfg = load_config(found)
    assert cfg["k"] == 3
    spec = build_spec(cfg, str(found))
    assert spec.resolve("loss", "float32").rtol == 1e-3
    (tmp_path / "pyproject.toml").write_text('[tool.mpsready.compare.tolerances]\n"x" = "loose"\n')
    with pytest.raises(UsageError, match="must be"):
        build_spec(load_config(found))
    (tmp_path / "pyproject.toml").write_text("not [toml")
    with pytest.raises(UsageError, match="cannot read"):
        load_config(found)
