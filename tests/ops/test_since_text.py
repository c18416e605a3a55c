"""The "since" row of ``mpsready ops``: the oldest shipped table is a lower bound (h6: ``since 2.2.2`` for
aten::add.Tensor and aten::scaled_dot_product_attention read as "added in 2.2.2")."""

from mpsready.cli import main
from mpsready.ops.render import since_text


def test_the_oldest_table_reads_as_a_lower_bound():
    assert since_text({"since_torch": "2.2.2", "kernel_since": "2.2.2"}) == "2.2.2 or earlier (the oldest table shipped)"


def test_a_later_release_is_stated_as_it_is():
    assert since_text({"since_torch": "2.8.0", "kernel_since": "2.8.0"}) == "2.8.0"
    assert since_text({"since_torch": "2.2.2", "kernel_since": "2.6.0"}) == (
        "2.2.2 or earlier (the oldest table shipped); MPS kernel since 2.6.0")
    assert since_text({"since_torch": None, "kernel_since": None}) == "never (in shipped releases)"


def test_terminal_lookup_prints_the_bound(capsys):
    assert main(["ops", "aten::add.Tensor", "aten::_amp_update_scale_", "--torch", "2.13"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if "since" in line]
    assert [r.split("│")[2].strip() for r in rows] == ["2.2.2 or earlier (the oldest table shipped)", "2.8.0"]
