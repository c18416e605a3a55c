"""Custom kernels and extensions, with fallback detection (fixture project `kernels`)."""

from tests.scan.conftest import rows


def test_kernels_fixture_exact_findings(scan_fixture):
    r = scan_fixture("kernels")
    assert rows(r) == [
        ("EXT101", "csrc/fused_kernel.cu", None, "blocker"),  # one finding per directory of .cu files
        ("DEP107", "cupy_ops.py", 1, "blocker"),
        ("EXT104", "cupy_ops.py", 3, "blocker"),  # cp.RawKernel
        ("EXT102", "jit_load.py", 3, "blocker"),  # load(sources=[... "ops.cu"])
        ("EXT105", "numba_ops.py", 5, "blocker"),  # @cuda.jit with `from numba import cuda`
        ("DEP107", "pyc.py", 1, "blocker"),
        ("EXT106", "pyc.py", 3, "blocker"),  # SourceModule
        ("EXT102", "setup.py", 6, "degrades"),  # fused._C is imported under try/except in fused/__init__.py
        ("DEP107", "tri.py", 1, "degrades"),  # tri is imported only under try/except (model.py); once per package
        ("EXT103", "tri.py", 6, "degrades"),  # @triton.jit with a fallback at the import site
        ("EXT107", "jit_load.py", 4, "info"),  # load_inline with C++ sources only
    ]
    ext = next(f for f in r.findings if f.code == "EXT102" and f.location.path == "setup.py")
    assert ext.output_evidence()["fallback"] == "the extension is imported under try/except at fused/__init__.py:2"
    tri = next(f for f in r.findings if f.code == "EXT103")
    assert tri.output_evidence()["fallback"] == "imported under try/except at model.py:2"
    assert r.outlook.value == "stay_on_cuda"
    assert [(f.code, f.location.path) for f in r.limiting] == [
        ("EXT101", "csrc/fused_kernel.cu"), ("EXT104", "cupy_ops.py"), ("EXT102", "jit_load.py"),
        ("EXT105", "numba_ops.py"), ("DEP107", "pyc.py"), ("EXT106", "pyc.py")]  # pycuda: no alternative


def test_kernel_guarded_in_same_file_is_lowered(write_project):
    from mpsready.scan import scan_path

    root = write_project({"k.py": (
        "try:\n    import triton\nexcept ImportError:\n    triton = None\n\n"
        "if triton is not None:\n    @triton.jit\n    def k(x):\n        pass\n")})
    r = scan_path(root)
    assert rows(r) == [("DEP107", "k.py", 2, "degrades"), ("EXT103", "k.py", 8, "degrades")]
    assert r.outlook.value == "runs_on_mac"


def test_reraising_handler_is_not_a_fallback(write_project):
    from mpsready.scan import scan_path

    root = write_project({"k.py": "try:\n    import cupy\nexcept ImportError:\n    raise SystemExit('need cupy')\n"})
    assert rows(scan_path(root)) == [("DEP107", "k.py", 2, "blocker")]
