"""Issue 38: a predicted Mac traceback shows the user's frames only (the emulator stands in for PyTorch's C++, so
the dispatch plumbing that reaches it, torch/_dynamo/eval_frame.py, is not on a Mac's stack)."""

from __future__ import annotations

import importlib.util
import sys
import textwrap


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_only_the_users_frames_are_printed(tmp_path, capsys):
    from mpsready.run.child import _print_exception

    lib = tmp_path / "venv" / "lib" / "site-packages" / "torch" / "_dynamo"
    lib.mkdir(parents=True)
    (lib / "eval_frame.py").write_text(textwrap.dedent('''
        def _fn(x):
            raise TypeError("Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support float64. Please use float32 instead.")
    '''))
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "train.py").write_text(textwrap.dedent('''
        import _h38_eval_frame as ef

        def main():
            return ef._fn(1)
    '''))
    _load(lib / "eval_frame.py", "_h38_eval_frame")
    train = _load(proj / "train.py", "_h38_train")
    try:
        train.main()
    except TypeError as exc:
        _print_exception(exc, str(tmp_path / "proj"))
    err = capsys.readouterr().err
    assert "eval_frame.py" not in err and "test_user_frames_traceback.py" not in err
    assert f'File "{proj / "train.py"}", line 5, in main' in err
    assert "  (2 frames inside PyTorch and other libraries not shown)\n" in err
    assert err.endswith("TypeError: Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't "
                        "support float64. Please use float32 instead.\n")
