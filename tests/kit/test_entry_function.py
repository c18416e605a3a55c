"""``kit --entry FILE:FUNC`` reads FILE with ``ast`` (never imports it) and refuses a function it does not define at
module level (h40c: ``--entry train.py:main`` was accepted for a train.py without ``main``)."""

import pytest

from mpsready.cli import main
from tests.kit.fake_mac import project


@pytest.mark.parametrize("entry", ["step.py:main", "step:main"])
def test_an_entry_function_the_file_does_not_define_is_refused(tmp_path, capsys, entry):
    proj = project(tmp_path / "proj")
    (proj / "step.py").write_text("raise SystemExit('imported!')\n\ndef step():\n    def main():\n        pass\n")
    out = tmp_path / "kit"
    assert main(["kit", str(proj), "--entry", entry, "-o", str(out)]) == 2
    assert capsys.readouterr().err == (f"mpsready kit: error: --entry {entry}: step.py defines no 'main' at module "
                                       "level (read with ast, not imported); its functions: step\n")
    assert not out.exists() and not (tmp_path / "kit.tar.gz").exists()


@pytest.mark.parametrize("source", [
    "def main():\n    pass\n",
    "async def main():\n    pass\n",
    "from functools import partial\nmain = partial(print)\n",
    "from model.net import build as main\n",
    "try:\n    from fast import main\nexcept ImportError:\n    def main():\n        pass\n",
    "if True:\n    main = print\n",
    "from model.net import *\n",  # cannot tell: not refused
    "def main(:\n",  # does not parse here (newer syntax?): not judged
])
def test_a_name_bound_at_module_level_is_accepted(tmp_path, source):
    proj = project(tmp_path / "proj")
    (proj / "step.py").write_text(source)
    assert main(["kit", str(proj), "--entry", "step.py:main", "-o", str(tmp_path / "kit"), "--torch", "2.5.1"]) == 0
