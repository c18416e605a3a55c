"""--format github: GitHub Actions workflow-command annotations with repository-relative paths."""

from mpsready.cli import main
from mpsready.scan.formats.github import escape_data, escape_property
from tests.scan.test_sarif_official import make_repo

FIX_101 = ("Pick a device once (`device = torch.accelerator.current_accelerator()` or an MPS-aware selection) "
           "and use `.to(device)`.")


def test_annotations_for_a_subfolder_of_a_repository(tmp_path, capsys):
    repo = make_repo(tmp_path, {"src/train.py": "import torch\nm = torch.nn.Linear(2, 2).cuda()\n",
                                "src/requirements.txt": "torch\n", "src/tests/t.py": "import torch\ntorch.ones(1).cuda()\n"})
    code = main(["scan", str(repo / "src"), "--format", "github", "--no-cache"])
    out = capsys.readouterr().out
    assert code == 1
    assert out.splitlines() == [
        "::error file=src/tests/t.py,line=2,col=1,endLine=2,endColumn=21,title=API101 dot-cuda-call::.cuda() moves to CUDA; on a Mac it "
        f"raises 'Torch not compiled with CUDA enabled'. Fix: {FIX_101} (scope: tests)",
        "::error file=src/train.py,line=2,col=5,endLine=2,endColumn=33,title=API101 dot-cuda-call::.cuda() moves to CUDA; on a Mac it raises "
        f"'Torch not compiled with CUDA enabled'. Fix: {FIX_101}",
        "mpsready scan src: 2 blocker, 0 degrades, 0 info; static outlook (predicted): mac_for_dev",
    ]


def test_directory_findings_and_notices(tmp_path, capsys):
    repo = make_repo(tmp_path, {"p/a.py": "print(1)\n"})
    assert main(["scan", str(repo / "p"), "--format", "github", "--no-cache", "--exit-zero"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("::notice file=p/a.py,line=1,title=DEP110 no-dependency-declaration::no dependency "
                            "declaration found (looked for: ")


def test_escaping_follows_the_workflow_command_rules():
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("a,b:c%\n") == "a%2Cb%3Ac%25%0A"
