"""A newcomer's pass over round 10's reach by calls (docs/scan.md, "round 10"): bugs found by writing small projects
and each kept as a test with a look-alike. Fixtures written for these tests."""

from __future__ import annotations

from tests.scan.conftest import bash_readme


README = bash_readme("pip install -r requirements.txt", "python cli.py train")
# a typer app: `python cli.py train` runs train() through app(), never by train's name
CLI = ("import torch\nimport typer\n\napp = typer.Typer()\n\n\n@app.{deco}\ndef train(steps: int = 10):\n"
       "    x = torch.zeros(3).cuda()\n    print(x, steps)\n\n\n{main}")
MAIN = "if __name__ == \"__main__\":\n    app()\n"


def _scan(scan_project, files):
    return scan_project(files, requirements="torch\ntyper\n", readme=README)


def test_a_command_of_the_entrys_command_line_runs(scan_project):
    # before: "not verified" (a decorator that may register it) and the headline runs_on_mac
    r = _scan(scan_project, {"cli.py": CLI.format(deco="command()", main=MAIN)})
    assert r.outlook.value == "mac_for_dev"
    assert [(f.code, f.location.path, f.location.line) for f in r.limiting] == [("API101", "cli.py", 9)]
    assert r.limiting[0].evidence["main_path"]["calls"] == ["cli.py:8 train"]
    assert r.not_verified == []


def test_look_alike_a_registered_function_of_an_imported_module_stays_not_verified(scan_project):
    # the same decorator in a module the entry imports (a registry of models): what selects it is not seen
    entry = "import torch\n\nimport models\n\n\nif __name__ == \"__main__\":\n    print(models.app)\n"
    r = _scan(scan_project, {"cli.py": entry, "models.py": CLI.format(deco="command()", main="")})
    assert r.outlook.value == "runs_on_mac"
    assert [(nv["path"], nv["line"]) for nv in r.not_verified] == [("models.py", 9)]


def test_the_exit_line_names_the_main_path_findings_below_the_gate_that_set_the_outlook(write_project, capsys):
    # the gate's findings are all in tests/, the outlook comes from a CUDA-or-CPU device pick (degrades) in train.py:
    # "so the outlook stays mac_for_dev" read as if the off-path findings had set it
    from mpsready.cli import main

    train = ("import torch\n\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
             "print(torch.nn.Linear(2, 2).to(device))\n")
    root = write_project({"train.py": train, "requirements.txt": "torch\n",
                          "README.md": bash_readme("python train.py"),
                          "tests/test_gpu.py": "import torch\nx = torch.zeros(2).cuda()\n"})
    assert main(["scan", str(root), "--no-cache", "-q"]) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    assert "(mac_for_dev)" in next(ln for ln in lines if ln.startswith("static outlook: "))
    assert lines[-1] == ("exit 1: 1 finding at or above blocker, all off the main path (tests, examples, secondary "
                         "parts, guarded or optional code); the outlook mac_for_dev comes from 1 main-path finding "
                         "below blocker; the exit code follows --fail-on blocker (pass --exit-zero to exit 0)")


def test_a_log_shows_the_call_chain_under_its_edit(write_project, capsys):
    # the terminal printed `main path: ...; calls: ...` under an edit; the log (a pipe, CI) printed neither
    from mpsready.cli import main

    root = write_project({"cli.py": CLI.format(deco="command()", main=MAIN), "requirements.txt": "torch\ntyper\n",
                          "README.md": README})
    assert main(["scan", str(root), "--no-cache", "-q"]) == 1
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("edit for the Mac: API101 cli.py:9 "))
    assert lines[at + 1] == "  main path: cli.py; calls: cli.py:8 train"


def test_a_finding_behind_a_flag_says_so_on_its_line_and_a_test_that_is_its_fact_is_named_once(scan_project):
    # a blocker listed with no tag under a runs_on_mac headline gave no reason; the reason repeated its test as its
    # fact ("torch.cuda.is_available() is False (line 7): torch.cuda.is_available() is False")
    from mpsready.scan.formats.concise import finding_line

    util = "def warm(x):\n    return cap(x)\n\n\ndef cap(x):\n    return x.cuda()\n"
    train = ("import torch\n\nfrom util import warm\n\n\ndef main():\n    if torch.cuda.is_available():\n"
             "        warm(torch.zeros(3))\n\n\nif __name__ == \"__main__\":\n    main()\n")
    r = scan_project({"train.py": train, "util.py": util}, readme=bash_readme("python train.py"))
    assert r.outlook.value == "runs_on_mac"
    [f] = [f for f in r.findings if f.code == "API101"]
    assert f.behind_flag == "a Mac never calls it: torch.cuda.is_available() is False (line 7)"
    assert finding_line(f).endswith("(behind flag: a Mac never calls it: torch.cuda.is_available() is False (line 7))")
