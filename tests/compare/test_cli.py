"""``mpsready compare`` end to end: exit codes, JSON envelope, Markdown, plots, errors."""

from __future__ import annotations

import argparse
import json


from mpsready.compare import cli
from mpsready.errors import UsageError


def run(argv):
    parser = argparse.ArgumentParser(prog="mpsready")
    sub = parser.add_subparsers(dest="command")
    cli.register(sub)
    args = parser.parse_args(["compare", *argv])
    try:
        return args.run(args)
    except UsageError as exc:
        return 2, str(exc)


def test_exit_0_when_within_tolerance(recs, capsys):
    assert run([str(recs["a"]), str(recs["a_rerun"]), "--no-config"]) == 0
    out = capsys.readouterr().out
    assert "OK" in out and "All 60 matched tensors and 3 step loss(es) agree" in out


def test_exit_1_and_json_envelope(recs, capsys, tmp_path):
    out = tmp_path / "cmp.json"
    code = run([str(recs["a"]), str(recs["perturbed"]), "--reference", str(recs["ref64"]), "--format", "json",
                "--output", str(out), "--plots", str(tmp_path / "plots"), "--no-config"])
    assert code == 1
    doc = json.loads(out.read_text())
    assert doc["schema"] == {"name": "mpsready.compare", "version": 1}
    assert doc["basis"] == "observed" and doc["devices"] == {"a": "cpu", "b": "cpu", "reference": "cpu"}
    assert doc["exit_code"] == 1 and doc["ok"] is False
    assert doc["first_divergence"]["forward"]["key"] == "activation:fc2#0"
    assert all(t["basis"] == "observed" for t in doc["tensors"])
    assert {f["code"] for f in doc["findings"]} >= {"NUM101", "NUM103", "NUM106"}
    assert sorted(doc["plots"]) == ["layer_error", "loss"]
    for name in ("loss.svg", "layer_error.svg"):
        data = (tmp_path / "plots" / name).read_bytes()
        assert data.startswith(b"<?xml") and b"<svg" in data[:1000] and b"<text" in data  # text stays text


def test_markdown(recs, capsys):
    assert run([str(recs["drop_a"]), str(recs["drop_b"]), "--format", "md", "--no-config"]) == 1
    md = capsys.readouterr().out
    assert md.startswith("# mpsready compare\n")
    assert "- forward: `activation:drop#0` (step 0)" in md
    assert "random operators used: Dropout (drop)" in md
    assert "**NUM105** info (observed)" in md


def test_cli_tolerance_makes_it_pass(recs, capsys):
    assert run([str(recs["a"]), str(recs["perturbed"]), "--atol", "0.1", "--no-config"]) == 0


def test_pyproject_tolerances_and_k(recs, tmp_path, capsys, monkeypatch):
    cfg = tmp_path / "pyproject.toml"
    cfg.write_text('[tool.mpsready.compare]\natol = 0.1\n')
    assert run([str(recs["a"]), str(recs["perturbed"]), "--config", str(cfg)]) == 0
    # a command-line pattern beats the config's global atol
    assert run([str(recs["a"]), str(recs["perturbed"]), "--config", str(cfg),
                "--tolerance", "activation:fc2*=0,1e-6"]) == 1
    cfg.write_text('[tool.mpsready.compare]\nk = 0.5\n')
    assert run([str(recs["a"]), str(recs["a_rerun"]), "--config", str(cfg)])[0] == 2


def test_input_errors_exit_2(recs, tmp_path):
    code, msg = run([str(tmp_path / "nope"), str(recs["a"]), "--no-config"])
    assert code == 2 and "run record not found" in msg
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "record.json").write_text('{"schema": {"name": "mpsready.trace", "version": 1}}')
    code, msg = run([str(bad), str(recs["a"]), "--no-config"])
    assert code == 2 and "expected an mpsready mpsready.record document" in msg
    code, msg = run([str(recs["a"]), str(recs["a"]), "--tolerance", "x", "--no-config"])
    assert code == 2 and "PATTERN=RTOL,ATOL" in msg


def test_corrupt_safetensors_exit_2(recs, tmp_path):
    import shutil

    b = tmp_path / "b"
    shutil.copytree(recs["perturbed"], b)
    (b / "tensors" / "step-0000.safetensors").write_bytes(b"garbage!garbage")
    code, msg = run([str(recs["a"]), str(b), "--no-config"])
    assert code == 2 and "step-0000.safetensors" in msg


def test_json_is_strict_with_infinite_values(recs, capsys):
    assert run([str(recs["drop_a"]), str(recs["drop_b"]), "--format", "json", "--no-config"]) == 1

    def refuse(name):
        raise AssertionError(f"non-standard JSON constant {name}")

    doc = json.loads(capsys.readouterr().out, parse_constant=refuse)
    drop = next(t for t in doc["tensors"] if t["key"] == "activation:drop#0" and t["step"] == 0)
    assert drop["metrics"]["max_rel"] == "inf"  # dropout zeros meet non-zero values
    assert doc["random_ops"] == ["Dropout (drop)"]
    assert doc["summary"]["rng_dependent"] is True


def test_terminal_output_to_file(recs, tmp_path, capsys):
    out = tmp_path / "cmp.txt"
    assert run([str(recs["a"]), str(recs["extra"]), "--output", str(out), "--no-config"]) == 1
    text = out.read_text()
    assert "not matched: activation:fc3#0 recorded in B only (missing in A: removed or renamed layer?) (steps 0-2)" \
        in text
    # head.* differ too: fc3's initialisation consumed random numbers before head's
    assert text.rstrip().endswith("DIFFERS: 53 of 60 tensors out of tolerance, 0 incomparable, "
                                  "6 structure difference(s), 3 step loss(es) differ")


def test_record_text_is_escaped_in_terminal_and_markdown_output():
    # a record may come from anywhere: a module name holding ESC or HTML must neither drive the terminal nor become
    # markup (issue 22's rule for every renderer of project text)
    from mpsready.compare.formats import markdown, terminal

    assert terminal.escape("enc\x1b[2J[red]x") == "enc\\x1b[2J\\[red]x"
    assert markdown._cell("a|<img onerror=x>\x07") == "a\\|&lt;img onerror=x&gt;\\x07"


def test_record_summary_escapes_manifest_text(tmp_path):
    import io

    from rich.console import Console

    from mpsready.record.render import render_terminal

    class Rec:
        path = tmp_path / "rec"
        manifest = {"observed_on": "cpu", "entry": "train.py:step\x1b]0;pwned\x07", "tensor_count": 1,
                    "findings": [{"code": "NUM101", "severity": "info", "basis": "observed", "message": "<b>\x1b[2J"}]}
        stages: list = []
        step_metrics: list = []

    buf = io.StringIO()
    render_terminal(Rec(), Console(file=buf, width=200, color_system=None))
    text = buf.getvalue()
    assert "\x1b" not in text and "\x07" not in text
    assert "entry train.py:step\\x1b]0;pwned\\x07," in text and "NUM101 info (observed): <b>\\x1b[2J" in text
