"""The per-file line index that replaced re-searching the text for every dependency (issue 14)."""

from mpsready.scan.sources.lines import LineIndex, string_literals


def test_string_literals_of_a_line():
    assert string_literals('  "torch>=2", \'numpy\', "a\\"b", "unclosed') == ["torch>=2", "numpy", 'a\\"b']
    assert string_literals("no quotes") == []


def test_find_at_or_after_start_then_anywhere():
    text = '[project]\ndependencies = ["torch"]\n[project.optional-dependencies]\ngpu = [\n  "torch",\n  "triton",\n]\n'
    idx = LineIndex(text)
    assert idx.find("torch") == 2
    assert idx.find("torch", start=3) == 5
    assert idx.find("triton", start=7) == 6  # nothing after 7: the first anywhere
    assert idx.find("optional-dependencies") == 3  # a [table] header's last part
    assert idx.key_line("gpu", 3) == 4
    assert idx.key_line("cpu", 3) == 3  # no such key: the start
    assert idx.find("absent") is None


def test_keys_values_and_comment_stripped_lines():
    idx = LineIndex("[options]\ninstall_requires =\n    flash-attn  # pinned\n    numpy\n[packages]\ntorch = \"*\"\n")
    assert idx.find("flash-attn") == 3
    assert idx.find("numpy") == 4
    assert idx.find("torch") == 6


def test_lines_counted_at_newline_only():
    idx = LineIndex('a = "x\u2028y"\nb = "z"\n')  # U+2028 is a line break for str.splitlines, not for TOML
    assert idx.find("z") == 2
