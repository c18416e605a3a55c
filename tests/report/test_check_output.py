"""``mpsready check``: what the user's step prints goes to stderr, stdout holds the report and the file labels
``demo`` uses too."""

from __future__ import annotations

import textwrap

from mpsready.cli import main
from mpsready.check.cli import print_written

STEP = textwrap.dedent('''
    import os
    import torch
    from mpsready.step import Step

    print("USER-IMPORT-PRINT")

    class Noisy(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 2)

        def forward(self, x):
            print("USER-FORWARD-PRINT")
            os.write(1, b"USER-FD1-WRITE\\n")  # what a C extension writing to file descriptor 1 does
            return self.lin(x)

    def step(device="cpu"):
        torch.manual_seed(0)
        return Step(model=Noisy(), batch=(torch.ones(3, 4), torch.zeros(3, 2)),
                    loss_fn=torch.nn.functional.mse_loss,
                    optimizer=lambda params: torch.optim.SGD(params, lr=0.1))
''')


def test_user_prints_go_to_stderr_and_files_are_labelled_like_demo(tmp_path, capfd):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "step.py").write_text(STEP)
    (project / "requirements.txt").write_text("torch\n")
    out = tmp_path / "out"
    main(["check", str(project), "--entry", "step.py:step", "--out", str(out), "--record-steps", "1"])
    printed = capfd.readouterr()
    for text in ("USER-IMPORT-PRINT", "USER-FORWARD-PRINT", "USER-FD1-WRITE"):
        assert text not in printed.out
    assert "USER-FORWARD-PRINT" in printed.err and "USER-FD1-WRITE" in printed.err
    assert "trace    done" in printed.err
    assert printed.out.splitlines()[-3:] == [f"Markdown report: {out / 'report.md'}",
                                             f"HTML report:     {out / 'report.html'}",
                                             f"JSON report:     {out / 'report.json'}"]


def test_print_written_without_html_says_why(tmp_path, capsys):
    print_written({"md": tmp_path / "report.md", "json": tmp_path / "report.json"})
    assert capsys.readouterr().out.splitlines() == [
        f"Markdown report: {tmp_path / 'report.md'}",
        "HTML report:     not written (needs jinja2: pip install mpsready[report])",
        f"JSON report:     {tmp_path / 'report.json'}"]
