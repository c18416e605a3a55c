"""Issue 14: record readers (record/layout.py, compare, report evidence) refuse non-finite or out-of-range
numbers and non-regular files with exit 2 and one line; compare never hangs on a named pipe."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from mpsready.cli import main


def damaged(recs, tmp_path, name="b"):
    out = tmp_path / name
    shutil.copytree(recs["a"], out)
    return out


def err_line(capsys):
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err
    lines = cap.err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def edit_manifest(path, change):
    doc = json.loads((path / "record.json").read_text())
    change(doc)
    text = json.dumps(doc)
    return text


def write(path, text):
    (path / "record.json").write_text(text)


@pytest.mark.parametrize("name, change, why", [
    ("loss 10**400", lambda d: d["step_metrics"][0].update(loss="BIG"), "an integer of 401 digits is out of range"),
    ("seconds 10**400", lambda d: d["step_metrics"][0].update(seconds="BIG"), "an integer of 401 digits is out of range"),
    ("memory 10**400", lambda d: d.update(memory={"peak_bytes": "BIG"}), "an integer of 401 digits is out of range"),
    ("5000 digits", lambda d: d.update(tensor_count="HUGE"), "an integer of 5000 digits is out of range"),
    ("-inf seconds", lambda d: d["step_metrics"][0].update(seconds="NEGINF"), "-Infinity is not a number JSON allows"),
    ("1e400 seconds", lambda d: d["step_metrics"][0].update(seconds="FLOATBIG"),
     "the number 1e400 is out of range (not a finite float)"),
    ("NaN loss", lambda d: d["step_metrics"][0].update(loss="NAN"), "NaN is not a number JSON allows"),
])
def test_out_of_range_numbers_in_record_json(recs, tmp_path, capsys, name, change, why):
    b = damaged(recs, tmp_path)
    text = edit_manifest(b, change)
    text = (text.replace('"BIG"', "1" + "0" * 400).replace('"HUGE"', "7" * 5000).replace('"NEGINF"', "-Infinity")
            .replace('"FLOATBIG"', "1e400").replace('"NAN"', "NaN"))
    write(b, text)
    assert main(["compare", str(recs["a"]), str(b), "--no-config"]) == 2
    assert err_line(capsys) == f"mpsready compare: error: {b / 'record.json'}: {why}"
    assert main(["report", "--record", str(b), "--format", "json", "--out", str(tmp_path / "r")]) == 2
    assert err_line(capsys) == f"mpsready report: error: {b / 'record.json'}: {why}"


@pytest.mark.parametrize("value, why", [
    ('"x"', 'stages[0].seconds must be a non-negative number, not "x"'),
    ("-1", "stages[0].seconds must be a non-negative number, not -1"),
])
def test_stage_time_that_is_not_a_time(recs, tmp_path, capsys, value, why):
    b = damaged(recs, tmp_path)
    text = edit_manifest(b, lambda d: d["stages"][0].update(seconds="STAGE"))
    write(b, text.replace('"STAGE"', value))
    assert main(["compare", str(recs["a"]), str(b), "--no-config"]) == 2
    assert err_line(capsys) == f"mpsready compare: error: {b / 'record.json'}: {why}"


def test_negative_step_seconds(recs, tmp_path, capsys):
    b = damaged(recs, tmp_path)
    write(b, edit_manifest(b, lambda d: d["step_metrics"][1].update(seconds=-0.5)))
    assert main(["report", "--record", str(b), "--out", str(tmp_path / "r")]) == 2
    assert err_line(capsys) == (f"mpsready report: error: {b / 'record.json'}: step_metrics[1].seconds must not be "
                                "negative, not -0.5")


def test_tensor_entry_with_non_finite_statistic(recs, tmp_path, capsys):
    b = damaged(recs, tmp_path)
    lines = (b / "tensors.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["stats"]["mean"] = "X"
    lines[0] = json.dumps(first).replace('"X"', "Infinity")
    (b / "tensors.jsonl").write_text("\n".join(lines) + "\n")
    assert main(["compare", str(recs["a"]), str(b), "--no-config"]) == 2
    assert err_line(capsys) == (f"mpsready compare: error: {b / 'tensors.jsonl'}:1: malformed tensor entry: "
                                "Infinity is not a number JSON allows")


def test_tensor_entry_with_a_negative_count(recs, tmp_path, capsys):
    b = damaged(recs, tmp_path)
    lines = (b / "tensors.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["stats"]["numel"] = -3
    lines[0] = json.dumps(first)
    (b / "tensors.jsonl").write_text("\n".join(lines) + "\n")
    assert main(["compare", str(recs["a"]), str(b), "--no-config"]) == 2
    assert err_line(capsys) == (f"mpsready compare: error: {b / 'tensors.jsonl'}:1: malformed tensor entry: "
                                "stats.numel must be a non-negative integer")


def test_raw_tensor_file_that_is_a_directory(recs, tmp_path, capsys):
    b = damaged(recs, tmp_path)
    raw = b / "tensors" / "step-0000.safetensors"
    raw.unlink()
    raw.mkdir()
    assert main(["compare", str(recs["a"]), str(b), "--no-config"]) == 2
    assert err_line(capsys) == f"mpsready compare: error: {raw} is a directory, not a regular file"


def test_raw_tensor_file_that_is_a_fifo_does_not_hang(recs, tmp_path, capsys):
    b = damaged(recs, tmp_path)
    raw = b / "tensors" / "step-0000.safetensors"
    raw.unlink()
    os.mkfifo(raw)  # opening it for reading used to block compare forever
    assert main(["compare", str(recs["a"]), str(b), "--no-config"]) == 2
    assert err_line(capsys) == f"mpsready compare: error: {raw} is a named pipe, not a regular file"


def test_record_json_that_is_a_fifo(recs, tmp_path, capsys):
    b = damaged(recs, tmp_path)
    (b / "record.json").unlink()
    os.mkfifo(b / "record.json")
    assert main(["compare", str(recs["a"]), str(b), "--no-config"]) == 2
    assert err_line(capsys) == f"mpsready compare: error: {b / 'record.json'}: {b / 'record.json'} is a named pipe, not a regular file"


def test_tensors_jsonl_that_is_a_directory(recs, tmp_path, capsys):
    b = damaged(recs, tmp_path)
    (b / "tensors.jsonl").unlink()
    (b / "tensors.jsonl").mkdir()
    assert main(["compare", str(recs["a"]), str(b), "--no-config"]) == 2
    assert err_line(capsys) == f"mpsready compare: error: {b / 'tensors.jsonl'}: {b / 'tensors.jsonl'} is a directory, not a regular file"


def test_stage_output_for_report_that_is_a_fifo(tmp_path, capsys):
    fifo = tmp_path / "scan.json"
    os.mkfifo(fifo)
    assert main(["report", "--scan", str(fifo), "--out", str(tmp_path / "r")]) == 2
    assert err_line(capsys) == f"mpsready report: error: cannot read {fifo}: {fifo} is a named pipe, not a regular file"


def test_scan_json_with_a_5000_digit_int_for_report(tmp_path, capsys):
    doc = '{"schema": {"name": "mpsready.scan", "version": 1}, "files_scanned": ' + "9" * 5000 + "}"
    (tmp_path / "scan.json").write_text(doc)
    assert main(["report", "--scan", str(tmp_path / "scan.json"), "--out", str(tmp_path / "r")]) == 2
    assert err_line(capsys) == (f"mpsready report: error: cannot read {tmp_path / 'scan.json'}: an integer of 5000 digits "
                                "is out of range")


def test_tensors_jsonl_with_a_byte_that_is_not_utf8(recs, tmp_path, capsys):
    # found by scripts/fuzz_long.py: the decode error escaped the reader's line loop
    b = damaged(recs, tmp_path)
    data = (b / "tensors.jsonl").read_bytes()
    (b / "tensors.jsonl").write_bytes(data.replace(b'"key"', b'"k\xedy"', 1))
    assert main(["compare", str(recs["a"]), str(b), "--no-config"]) == 2
    assert err_line(capsys) == (f"mpsready compare: error: {b / 'tensors.jsonl'}:1: malformed tensor entry: 'utf-8' "
                                "codec can't decode byte 0xed in position 3: invalid continuation byte")
