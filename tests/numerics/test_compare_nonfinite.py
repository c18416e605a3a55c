"""``compare`` says which run went non-finite first (NUM302), from both records' ``first_nonfinite``."""
from pathlib import Path

from mpsready.compare.engine import compare_records
from mpsready.record.recorder import record_entry

HERE = Path(__file__).parent


def _line(marker: str) -> int:
    lines = (HERE / "entries.py").read_text(encoding="utf-8").splitlines()
    return next(i for i, text in enumerate(lines, 1) if text.rstrip().endswith(f"# {marker}"))


def test_one_side_went_nonfinite_first(tmp_path):
    a = record_entry("entries.py:finite", device="cpu", steps=1, out=tmp_path / "a", cwd=str(HERE), isolate=False)
    b = record_entry("entries.py:log_negative", device="cpu", steps=1, out=tmp_path / "b", cwd=str(HERE),
                     isolate=False)
    comp = compare_records(a, b)
    (f,) = [f for f in comp.findings if f.code == "NUM302"]
    assert f.message.startswith(f"B (cpu) went non-finite first: aten::log (float32) at entries.py:{_line('LOG_LINE')} "
                                "in forward, stage forward, step 0")
    assert f.message.endswith("; A (cpu) stayed finite")
    assert f.evidence["side"] == "B" and f.location.line == _line("LOG_LINE")
    # the same two records the other way round
    (g,) = [f for f in compare_records(b, a).findings if f.code == "NUM302"]
    assert g.evidence["side"] == "A"
    # both finite: nothing
    assert not [f for f in compare_records(a, a).findings if f.code == "NUM302"]
