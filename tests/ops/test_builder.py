"""The builder's parts on small synthetic inputs, and the shipped tables against the measured counts."""

from __future__ import annotations

import gzip
import importlib.util
import json
from pathlib import Path

import pytest

from mpsready.ops.api import load_db, shipped_versions
from mpsready.ops.build import builder, common_mps, fetch
from mpsready.ops.build.pyregs import mps_impls
from mpsready.ops.build.yaml_table import YAML_MEMBER, classify_text

SYNTH_YAML = """
- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
  structured: True
  ufunc_inner_loop:
    Generic: add (AllAndComplex, BFloat16, Half)
  dispatch:
    MPS: add_out_mps
    SparseMPS: add_out_sparse_mps
- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  structured_delegate: add.out
  tags: [core, pointwise]
- func: nanmedian.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
  dispatch:
    CompositeExplicitAutograd: nanmedian
- func: nanmedian.dim_values(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)
  dispatch:
    CPU, CUDA: nanmedian_out
- func: linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor
  dispatch:
    CompositeImplicitAutograd: linear
    MPS: _mps_linear
- func: dropout(Tensor input, float p, bool train) -> Tensor
- func: embedding_renorm_(Tensor(a!) self, Tensor indices, float max_norm, float norm_type) -> Tensor(a!)
  dispatch:
    CPU: embedding_renorm_cpu_
    CUDA: embedding_renorm_cuda_
  autogen: embedding_renorm, embedding_renorm.out
- func: _slow_conv2d_forward(Tensor self, Tensor weight, SymInt[2] kernel_size, Tensor? bias, SymInt[2] stride, SymInt[2] padding) -> Tensor
  dispatch:
    CPU: slow_conv2d_forward_cpu
    CUDA: slow_conv2d_forward_cuda
- func: cia_noncore(Tensor self) -> Tensor
  autogen: cia_noncore.out
"""


def test_yaml_classification_rules():
    # research note §1.1: delegates, ufunc (CUDA only), CEA, CIA, CIA+MPS override, autogen, torchgen's
    # no-autogen-for-non-core-CIA rule
    ops = classify_text(SYNTH_YAML)
    got = {n: (o.mps, o.cuda, o.via) for n, o in ops.items()}
    assert got == {
        "add.out": ("explicit", "explicit", None),
        "add.Tensor": ("delegate", "delegate", "add.out"),
        "nanmedian.dim": ("composite_explicit", "composite_explicit", None),
        "nanmedian.dim_values": ("none", "explicit", None),
        "linear": ("explicit", "composite_implicit", None),
        "dropout": ("composite_implicit", "composite_implicit", None),
        "embedding_renorm_": ("none", "explicit", None),
        "_slow_conv2d_forward": ("none", "explicit", None),
        "cia_noncore": ("composite_implicit", "composite_implicit", None),
        "embedding_renorm": ("autogen", "autogen", "embedding_renorm_"),
        "embedding_renorm.out": ("autogen", "autogen", "embedding_renorm_"),
    }
    assert ops["add.out"].sparse_mps and not ops["add.Tensor"].sparse_mps
    assert ops["add.Tensor"].core and not ops["add.out"].core


def test_build_release_from_synthetic_wheel_files(tmp_path):
    (tmp_path / YAML_MEMBER).parent.mkdir(parents=True)
    (tmp_path / YAML_MEMBER).write_text(SYNTH_YAML)
    (tmp_path / fetch.MANIFEST).write_text(json.dumps({"wheel": "torch-2.99.0-x.whl", "sha256": "ab" * 32}))
    table = builder.build_release("2.99.0", tmp_path)  # not in EXPECTED_COUNTS: no count check
    ops = table["ops"]
    assert (ops["add.Tensor"]["s"], ops["add.Tensor"]["h"]) == ("kernel", "yaml:delegate(add.out)")
    assert (ops["embedding_renorm_"]["s"], ops["embedding_renorm_"]["h"]) == ("cpu_fallback_always",
                                                                              "curated:MPSFallback.mm")
    assert ops["_slow_conv2d_forward"]["s"] == "guard"
    assert (ops["nanmedian.dim_values"]["s"], ops["nanmedian.dim"]["s"]) == ("missing", "composite")
    assert ops["embedding_renorm.out"]["h"] == "yaml:autogen(embedding_renorm_)"
    assert table["wheel"] == {"name": "torch-2.99.0-x.whl", "sha256": "ab" * 32, "version": None}
    assert table["min_macos"] == "14.0"
    assert table["routing"] == {}  # every route's target (_mps_convolution, ...) is absent from this yaml


def test_build_release_rejects_wrong_wheel_version(tmp_path):
    (tmp_path / YAML_MEMBER).parent.mkdir(parents=True)
    (tmp_path / YAML_MEMBER).write_text(SYNTH_YAML)
    (tmp_path / fetch.MANIFEST).write_text(json.dumps({"wheel": "w.whl", "sha256": "0" * 64}))
    (tmp_path / "torch/version.py").parent.mkdir(parents=True)
    (tmp_path / "torch/version.py").write_text("__version__ = '2.98.0+cpu'\ngit_version = 'abc'\n")
    assert builder.wheel_version(tmp_path) == "2.98.0+cpu"
    with pytest.raises(AssertionError, match="version.py says 2.98.0"):
        builder.build_release("2.99.0", tmp_path)


def test_build_release_rejects_wrong_counts(tmp_path):
    (tmp_path / YAML_MEMBER).parent.mkdir(parents=True)
    (tmp_path / YAML_MEMBER).write_text(SYNTH_YAML)
    (tmp_path / fetch.MANIFEST).write_text(json.dumps({"wheel": "w.whl", "sha256": "0" * 64}))
    with pytest.raises(AssertionError, match="differ from the research note"):
        builder.build_release("2.5.1", tmp_path)


def test_python_registration_mismatch_is_an_error(tmp_path):
    # 2.5.1's curated list says group norm is registered from torch/backends/mps/__init__.py; a file that
    # registers something else must stop the build
    (tmp_path / YAML_MEMBER).parent.mkdir(parents=True)
    (tmp_path / YAML_MEMBER).write_text(SYNTH_YAML)
    (tmp_path / fetch.MANIFEST).write_text(json.dumps({"wheel": "w.whl", "sha256": "0" * 64}))
    backends = tmp_path / "torch/backends/mps/__init__.py"
    backends.parent.mkdir(parents=True)
    backends.write_text('_lib.impl("add.Tensor", f, "MPS")\n')
    with pytest.raises(AssertionError, match="registers"):
        builder.build_release("2.99.0", tmp_path)


def test_pyregs_ast():
    src = '''
from torch.library import Library as _Library
def _init():
    _lib = _Library("aten", "IMPL")
    _lib.impl("native_group_norm", native_group_norm, "MPS")
    _lib.impl("native_group_norm_backward", native_group_norm_backward, "MPS")
    _lib.impl("something", f, "CPU")
    # _lib.impl("commented", f, "MPS")
'''
    assert mps_impls(src) == ["native_group_norm", "native_group_norm_backward"]


COMMON_MPS_SRC = '''
import torch
from .common_utils import MACOS_VERSION
if torch.backends.mps.is_available():
    def mps_ops_modifier(ops, device_type="mps", sparse=False):
        SUPPORTED_COMPLEX_OPS = {"add", "mul"}
        MACOS_BEFORE_14_4_XFAILLIST = {
            "fft.hfft2": [torch.complex64],
        }
        UNIMPLEMENTED_XFAILLIST: dict = {
            # Failures due to lack of op implementation on MPS backend
            "linalg.eig": None,
            "scatter_reduceamax": [torch.int32, torch.int64] if MACOS_VERSION < 15.0 else [torch.int64],
            "nn.functional.conv2d": [torch.long],
        }
        if MACOS_VERSION < 15.0:
            UNIMPLEMENTED_XFAILLIST.update({"quantile": None})
        if sparse:
            UNIMPLEMENTED_XFAILLIST.update({"put": None})
        UNDEFINED_XFAILLIST = {"randint": [torch.bool]}
        for op in ops:
            pass
        return ops
'''


def test_common_mps_symbolic_evaluation():
    # research note §3: lists are locals of mps_ops_modifier; MACOS conditions inline and as if-blocks
    at14 = common_mps.evaluate(COMMON_MPS_SRC, "14.0")
    assert at14.lists["UNIMPLEMENTED_XFAILLIST"] == {
        "linalg.eig": None, "scatter_reduceamax": ["int32", "int64"], "nn.functional.conv2d": ["int64"],
        "quantile": None}
    assert common_mps.evaluate(COMMON_MPS_SRC, "15.0").lists["UNIMPLEMENTED_XFAILLIST"]["scatter_reduceamax"] == [
        "int64"]
    per_key, skipped, n_complex = common_mps.key_exceptions(COMMON_MPS_SRC, "14.0")
    assert (skipped, n_complex) == ([], 2)
    assert {k: v.dx for k, v in per_key.items()} == {
        "fft.hfft2": {"complex64": {"min_macos": "14.4"}},
        "linalg.eig": {"*": {"unsupported": True}},
        "nn.functional.conv2d": {"int64": {"unsupported": True}},
        "quantile": {"*": {"min_macos": "15.0"}},
        "scatter_reduceamax": {"int32": {"min_macos": "15.0"}, "int64": {"unsupported": True}},
    }
    assert per_key["linalg.eig"].comment == "Failures due to lack of op implementation on MPS backend"
    assert "put" not in per_key and "randint" not in per_key  # sparse-only / numerical lists are not gaps


# research note §1.2 (measured): overloads, MPS device kernels, explicit, delegate, CEA, autogen, CIA, none
MEASURED = {
    "2.3.1": (3098, 658, 382, 276, 429, 503, 835, 673), "2.4.1": (3120, 665, 388, 277, 573, 507, 836, 539),
    "2.5.1": (3134, 686, 405, 281, 581, 508, 839, 520), "2.6.0": (3144, 707, 417, 290, 586, 511, 839, 501),
    "2.7.1": (3148, 739, 434, 305, 586, 511, 839, 473), "2.8.0": (3164, 813, 475, 338, 587, 514, 839, 411),
    "2.9.1": (3171, 847, 499, 348, 588, 513, 842, 381), "2.10.0": (3184, 855, 506, 349, 593, 518, 844, 374),
    "2.11.0": (3194, 867, 515, 352, 598, 520, 841, 368), "2.13.0": (3101, 890, 533, 357, 592, 517, 747, 355),
    "2.14.1": (3103, 912, 549, 363, 592, 518, 745, 336),
}


@pytest.mark.parametrize("release", list(MEASURED))
def test_shipped_counts_match_research_note(release):
    c = load_db(release).counts["yaml"]
    got = (c["overloads"], c["mps_device"], c["explicit"], c["delegate"], c["composite_explicit"], c["autogen"],
           c["composite_implicit"], c["none"])
    assert got == MEASURED[release]
    assert builder.EXPECTED_COUNTS[release][:8] == MEASURED[release]


# releases the research note did not measure (issue 10: every release users run, the .0 releases where a fix
# first shipped, and 2.12), with the measured sibling whose counts they share
UNMEASURED = {"2.3.0": "2.3.1", "2.4.0": "2.4.1", "2.5.0": "2.5.1", "2.7.0": "2.7.1", "2.9.0": "2.9.1",
              "2.12.0": None, "2.12.1": None, "2.14.0": "2.14.1", "2.2.2": None}
# read by the builder from the wheels (no research figure): 2.12.x macosx_14_0_arm64, 2.2.2 macosx_11_0_arm64
READ_BY_BUILDER = {"2.12.0": (3216, 878, 523, 355, 600, 525, 847, 366), "2.12.1": (3216, 878, 523, 355, 600, 525, 847, 366),
                   "2.2.2": (3068, 644, 370, 274, 419, 498, 830, 677)}


@pytest.mark.parametrize("release", list(UNMEASURED))
def test_unmeasured_release_counts(release):
    c = load_db(release).counts["yaml"]
    got = (c["overloads"], c["mps_device"], c["explicit"], c["delegate"], c["composite_explicit"], c["autogen"],
           c["composite_implicit"], c["none"])
    sibling = UNMEASURED[release]
    assert got == (MEASURED[sibling] if sibling else READ_BY_BUILDER[release])
    assert builder.EXPECTED_COUNTS[release][:8] == got


def test_every_release_shipped_with_checksums():
    from packaging.version import Version

    assert shipped_versions() == sorted([*MEASURED, *UNMEASURED], key=Version) == list(builder.RELEASES)
    for release in shipped_versions():
        db = load_db(release)
        assert len(db.wheel["sha256"]) == 64 and db.wheel["name"].startswith(f"torch-{release}")
        assert len(db._doc["yaml_sha256"]) == 64


def test_package_data_small():
    tables = Path(builder.TABLES_DIR)
    total = sum(p.stat().st_size for p in tables.glob("*.json.gz"))
    assert 100_000 < total < 5_000_000
    for p in tables.glob("torch-*.json.gz"):
        doc = json.loads(gzip.decompress(p.read_bytes()))
        assert doc["schema"] == {"name": "mpsready.ops-table", "version": 1}


@pytest.mark.skipif(importlib.util.find_spec("torchgen") is None, reason="torchgen (torch) not installed")
def test_installed_torchgen_yaml_matches_shipped_2_13_table():
    # the venv's torch 2.13.0 ships the same native_functions.yaml as the wheel the table was built from
    import torchgen

    path = Path(torchgen.__file__).parent / "packaged/ATen/native/native_functions.yaml"
    import hashlib

    data = path.read_bytes()
    db = load_db("2.13.0")
    if hashlib.sha256(data).hexdigest() != db._doc["yaml_sha256"]:
        pytest.skip("installed torch is not 2.13.0")
    ops = classify_text(data.decode())
    assert set(ops) == set(db.op_names())
    assert sum(o.mps in ("explicit", "delegate") for o in ops.values()) == 890


# research note §3 table (measured): UNIMPLEMENTED (all-dtype) at macOS 14, at macOS 15, UNDEFINED, complex allow-list
COMMON_MPS_SIZES = {"2.9.1": (116, 96, 114, 25, 267), "2.11.0": (139, 75, 137, 28, 277),
                    "2.13.0": (111, 61, 111, 12, 311), "2.14.1": (83, 39, 83, 10, 328)}


@pytest.mark.parametrize("release", list(COMMON_MPS_SIZES))
def test_common_mps_list_sizes_match_research_note(release):
    c = load_db(release)._doc["common_mps"]
    s14, s15 = c["list_sizes"]["14.0"], c["list_sizes"]["15.0"]
    got = (s14["unimplemented"], s14["unimplemented_all_dtypes"], s15["unimplemented"], s14["undefined"],
           c["complex_allowlist_size"])
    assert got == COMMON_MPS_SIZES[release]


def test_check_routing_catches_misspelt_ops(monkeypatch):
    real = builder.curated.load

    def fake(name):
        if name == "routing":
            return {"entries": [{"from": "_slow_conv2d_forwrd", "to": ["_mps_convolution"], "source": "typo"}]}
        return real(name)

    monkeypatch.setattr(builder.curated, "load", fake)
    tables = {"2.13.0": {"routing": load_db("2.13.0")._doc["routing"]}}
    with pytest.raises(AssertionError, match="_slow_conv2d_forwrd"):
        builder.check_routing(tables)


def test_check_routing_catches_misspelt_with_ops(monkeypatch):
    real = builder.curated.load
    routing = load_db("2.13.0")._doc["routing"]

    def fake(name):
        if name == "routing":
            return {"entries": [{"from": "native_dropout", "to": ["bernoulli_.float"], "source": "typo",
                                 "with": [{"op": "div_.Scalar"}, {"op": "mul.Tensr"}]}]}
        return real(name)

    monkeypatch.setattr(builder.curated, "load", fake)
    with pytest.raises(AssertionError, match=r"\('native_dropout', 'mul.Tensr', None\)"):
        builder.check_routing({"2.13.0": {"routing": routing}})


def test_check_routing_passes_on_the_shipped_tables():
    # the builder's own check over every shipped release (what `python -m mpsready.ops.build` runs last)
    from mpsready.ops.api import shipped_versions

    builder.check_routing({v: load_db(v)._doc for v in shipped_versions()})
