"""An ENTRY file kept outside the project still points findings at the project's lines."""
from __future__ import annotations

import argparse
import json
import textwrap

import pytest

pytest.importorskip("torch")

from mpsready.errors import UsageError  # noqa: E402
from mpsready.trace import cli, trace_entry  # noqa: E402

MODEL = textwrap.dedent("""\
    import numpy as np
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 2)
            self.register_buffer("scale", torch.from_numpy(np.ones(2)))

        def forward(self, x):
            return self.lin(x) * self.scale.float()
    """)
BUFFER_LINE = 10  # the register_buffer line above

ENTRY = textwrap.dedent("""\
    import sys
    sys.path.insert(0, {project!r})
    import torch
    from mpsready.step import Step
    from outsidepkg.model import Net


    def step():
        return Step(model=Net(), batch=torch.ones(3, 4), loss_fn=lambda out: out.sum())
    """)


@pytest.fixture
def layout(tmp_path):
    project = tmp_path / "project"
    (project / "outsidepkg").mkdir(parents=True)
    (project / "outsidepkg" / "__init__.py").write_text("")
    (project / "outsidepkg" / "model.py").write_text(MODEL)
    entries = tmp_path / "entries"
    entries.mkdir()
    (entries / "outside_step.py").write_text(ENTRY.format(project=str(project)))
    yield project, entries / "outside_step.py"
    import sys
    for name in [m for m in sys.modules if m == "outsidepkg" or m.startswith("outsidepkg.")]:
        del sys.modules[name]



def test_project_files_count_as_user_code_when_the_entry_lies_outside(layout):
    project, entry = layout
    result = trace_entry(f"{entry}:step", torch="2.13", macos="14.4", project=str(project))
    events = [e for e in result.trace.dtype_events if e.dtype == "float64" and e.origin_frame is not None]
    assert {(e.origin_frame.path, e.origin_frame.line) for e in events} == {("outsidepkg/model.py", BUFFER_LINE)}
    messages = [f.message for f in result.prediction.findings if f.code == "DTY201" and f.location.stage == "to_device"]
    assert len(messages) == 1 and f"at outsidepkg/model.py:{BUFFER_LINE} " in messages[0]


def test_cwd_counts_as_the_project_as_check_passes_it(layout):
    project, entry = layout
    result = trace_entry(str(entry) + ":step", torch="2.13", macos="14.4", cwd=str(project))
    events = [e for e in result.trace.dtype_events if e.dtype == "float64" and e.origin_frame is not None]
    assert {(e.origin_frame.path, e.origin_frame.line) for e in events} == {("outsidepkg/model.py", BUFFER_LINE)}


def test_cli_project_flag_and_missing_directory(layout, tmp_path):
    project, entry = layout
    parser = argparse.ArgumentParser(prog="mpsready")
    cli.register(parser.add_subparsers(dest="command"))
    out = tmp_path / "t.json"
    args = parser.parse_args(["trace", f"{entry}:step", "--torch", "2.13", "--macos", "14.4", "--project",
                              str(project), "--format", "json", "-o", str(out)])
    assert args.run(args) == 1
    doc = json.loads(out.read_text())
    to_device = [f for f in doc["findings"] if f["code"] == "DTY201" and f["location"]["stage"] == "to_device"]
    assert len(to_device) == 1 and f"at outsidepkg/model.py:{BUFFER_LINE} " in to_device[0]["message"]
    args = parser.parse_args(["trace", f"{entry}:step", "--project", str(tmp_path / "nowhere")])
    with pytest.raises(UsageError, match="--project .*nowhere.* is not a directory"):
        args.run(args)
