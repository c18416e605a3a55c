"""``mpsready run``: the first NaN/Inf and input shapes that change every step, on the emulated Mac."""
import textwrap

from tests.run.helpers import emulate, write

SEQ = textwrap.dedent("""\
    import torch
    from torch import nn

    torch.manual_seed(0)
    dev = torch.device("mps")
    model = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(6):
        length = {lengths}
        x = torch.randn(4, length, 8).to(dev)
        y = model(x).mean(dim=1)  # MODEL_LINE
        loss = (y ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    """)

NAN = textwrap.dedent("""\
    import torch

    torch.manual_seed(0)
    dev = torch.device("mps")
    lin = torch.nn.Linear(3, 3).to(dev)
    opt = torch.optim.SGD(lin.parameters(), lr=0.1)
    x = torch.tensor([[1.0, -2.0, 3.0]]).to(dev)
    for step in range(3):
        scale = torch.sqrt(x - step)  # SQRT_LINE
        loss = (lin(x) + scale).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    """)


def _line(path, marker):
    return next(i for i, t in enumerate(path.read_text().splitlines(), 1) if t.rstrip().endswith(f"# {marker}"))


def test_new_sequence_length_every_step_is_reported_with_its_line(tmp_path):
    script = write(tmp_path, SEQ.format(lengths="5 + step"))
    _res, doc, _out, _err = emulate(script)
    assert doc["outcome"] == "completed" and doc["steps_observed"] == 6
    dyn = {(d["op"], d["location"]["line"]): d for d in doc["dynamic_shapes"]}
    line = _line(script, "MODEL_LINE")
    # aten::linear runs as one MPS kernel (judged whole): two layers, six lengths, new in each of steps 1..5
    lin = dyn[("aten::linear", line)]
    assert lin["distinct"] == 12 and lin["new_in_steps"] == [1, 2, 3, 4, 5] and lin["steps"] == 6
    assert lin["shapes"][0] == [[4, 5, 8], [8, 8], [8]]
    tanh = dyn[("aten::tanh", line)]
    assert tanh["distinct"] == 6 and [s[0][1] for s in tanh["shapes"]] == [5, 6, 7, 8, 9, 10]
    prf = [f for f in doc["findings"] if f["code"] == "PRF301" and f["location"]["operator"] == "aten::tanh"]
    assert len(prf) == 1 and prf[0]["severity"] == "degrades" and prf[0]["basis"] == "predicted"
    assert prf[0]["location"]["line"] == line
    assert prf[0]["message"].startswith(f"aten::tanh at script.py:{line} in <module>: 6 distinct input shapes in "
                                        "6 steps (new in steps 1, 2, 3, 4, 5;")
    assert "drop_last=True" in prf[0]["fix"]
    # views build no MPS graph: not counted
    assert not [d for d in doc["dynamic_shapes"] if d["op"] in ("aten::view", "aten::t")]


def test_fixed_shapes_are_not_reported(tmp_path):
    script = write(tmp_path, SEQ.format(lengths="7"))
    _res, doc, _out, _err = emulate(script)
    assert doc["outcome"] == "completed" and doc["steps_observed"] == 6
    assert doc["dynamic_shapes"] == []
    assert not [f for f in doc["findings"] if f["code"] == "PRF301"]


def test_first_nan_names_the_sqrt_line_in_the_emulated_run(tmp_path):
    script = write(tmp_path, NAN)
    _res, doc, _out, _err = emulate(script)
    first = doc["first_nonfinite"]
    assert (first["op"], first["dtype"], first["stage"], first["step"]) == ("aten::sqrt", "float32", "forward", 0)
    assert first["location"]["line"] == _line(script, "SQRT_LINE") and first["location"]["path"] == "script.py"
    assert (first["nan"], first["inf"]) == (1, 0) and first["from_finite_inputs"] is True
    assert (first["inputs"][0]["min"], first["inputs"][0]["max"]) == (-2.0, 3.0)
    (num,) = [f for f in doc["findings"] if f["code"] == "NUM301"]
    assert num["basis"] == "predicted" and num["location"]["line"] == _line(script, "SQRT_LINE")
    assert doc["outcome"] == "completed" and doc["exit_code"] == 0  # a NaN does not change the outcome


def test_no_nan_check(tmp_path):
    from mpsready.run.child import run
    from mpsready.run.document import build_document

    script = write(tmp_path, NAN)
    spec = {"program": {"kind": "script", "target": str(script), "argv": [str(script)], "root": str(tmp_path)},
            "target": {"torch": "2.13", "macos": "15.5", "fallback": False}, "keep_going": False,
            "max_steps": None, "time_limit": None, "nan_check": False}
    import sys
    saved = list(sys.argv), list(sys.path)
    try:
        doc = build_document(spec, run(spec))
    finally:
        sys.argv[:], sys.path[:] = saved
    assert doc["nan_check"] is False and doc["first_nonfinite"] is None and doc["checked"] == 0


def test_the_report_carries_the_runs_first_nan_and_the_document_validates(tmp_path):
    import json
    from importlib import resources

    import jsonschema

    from mpsready.report.build import build_report
    from mpsready.report.evidence import Evidence
    from mpsready.report.evidence import run as run_ev

    script = write(tmp_path, NAN)
    _res, doc, _out, _err = emulate(script)
    schema = json.loads(resources.files("mpsready.run").joinpath("data/run.schema.json").read_text())
    jsonschema.validate(json.loads(json.dumps(doc)), schema)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(doc))
    report = build_report(Evidence(run=run_ev.load(path))).to_dict()
    (num,) = [f for f in report["findings"] if f["code"] == "NUM301"]
    assert num["location"]["line"] == _line(script, "SQRT_LINE") and num["location"]["operator"] == "aten::sqrt"
    # the dynamic-shape document validates too
    _res, doc2, _o, _e = emulate(write(tmp_path, SEQ.format(lengths="5 + step"), "seq.py"))
    jsonschema.validate(json.loads(json.dumps(doc2)), schema)


DIVERGES = textwrap.dedent("""\
    import torch

    torch.manual_seed(0)
    x = torch.arange(60.0, 110.0, 10.0).reshape(-1, 1)
    y = 4 * x
    model = torch.nn.Linear(1, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.002)
    for epoch in range(200):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)  # LOSS_LINE
        loss.backward()
        opt.step()
    """)


def test_a_cpu_program_that_diverges_names_the_op_that_overflowed(tmp_path):
    script = write(tmp_path, DIVERGES)
    _res, doc, _out, _err = emulate(script)
    first = doc["first_nonfinite"]
    assert (first["op"], first["device"], first["stage"]) == ("aten::mse_loss", "cpu", "forward")
    assert first["location"]["line"] == _line(script, "LOSS_LINE") and first["from_finite_inputs"] is True
    assert (first["nan"], first["inf"]) == (0, 1)
    pred = first["inputs"][0]
    assert max(abs(pred["min"]), abs(pred["max"])) > 1.8e19  # its square overflows float32 (3.4e38)
    from mpsready.run.render import render_terminal

    assert f"NUM301 (degrades): first NaN/Inf on the CPU (a call of the program on CPU tensors, as a Mac runs it): " \
           f"aten::mse_loss (float32) at script.py:{_line(script, 'LOSS_LINE')}" in render_terminal(doc)


ADAM_NAN = textwrap.dedent("""\
    import torch

    torch.manual_seed(0)
    dev = torch.device("mps")
    lin = torch.nn.Linear(2, 1).to(dev)
    opt = torch.optim.Adam(lin.parameters(), lr=0.1, eps=0.0)
    x = torch.ones(3, 2).to(dev)
    for step in range(3):
        opt.zero_grad()
        (lin(x) * 0).sum().backward()  # zero gradients: Adam divides 0 by sqrt(0) + eps = 0
        opt.step()  # STEP_LINE
    """)


def test_the_optimizer_writing_nan_into_a_parameter_is_reported_in_the_optimizer_stage(tmp_path):
    script = write(tmp_path, ADAM_NAN)
    _res, doc, _out, _err = emulate(script)
    first = doc["first_nonfinite"]
    assert first["stage"] == "optimizer" and first["step"] == 0 and first["device"] == "mps"
    assert first["location"]["line"] == _line(script, "STEP_LINE")
    # param.addcdiv_(exp_avg, denom): 0 / 0 from finite inputs; the parameter itself is the written input
    assert (first["op"], first["from_finite_inputs"], first["nan"]) == ("aten::addcdiv_", True, 2)
    written, exp_avg, denom = first["inputs"]
    assert written["written"] is True and (exp_avg["max"], denom["max"]) == (0.0, 0.0)
