"""Issue 32, round 8: an argparse parse result holds the options whatever its name. The Mac-facts evaluation read an
option only through a name like ``args``; bound to ``a`` (or unpacked from ``parse_known_args``, or returned by a
helper) the option was read as a tensor's device, and a test on it was decided with a wrong fact. Each spelling has a
fixture; the look-alike is an object named ``args`` that is no parse result. Fixtures written for these tests."""

from __future__ import annotations

import pytest

from mpsready.scan import scan_path
from tests.scan.conftest import rows

# `--gpu-device 0 1` style: GPU ids, a Mac names none, so the option keeps its default None on a Mac
HEAD = ("import argparse\nimport torch\n\nparser = argparse.ArgumentParser()\n"
        "parser.add_argument('--device', type=int, default=None)\n")


def _body(name: str, indent: str = "") -> str:
    return (f"{indent}if {name}.device is None:\n"
            f"{indent}    torch.cuda.synchronize()\n"
            f"{indent}print({name})\n")


SPELLINGS = {
    # module-level binding with a short name
    "short_name": HEAD + "a = parser.parse_args()\n" + _body("a"),
    # a name that is not one of the settings-like names
    "other_name": HEAD + "run_opts = parser.parse_args()\n" + _body("run_opts"),
    # the pair of parse_known_args, unpacked
    "known_args": HEAD + "ns, rest = parser.parse_known_args()\n" + _body("ns"),
    # a helper returning the parse result, bound in a function
    "helper": HEAD + "\n\ndef parse():\n    got = parser.parse_args()\n    return got\n\n\ndef main():\n"
              "    o = parse()\n" + _body("o", "    ") + "\n\nmain()\n",
    # a helper returning the first of parse_known_args
    "helper_known": HEAD + "\n\ndef parse():\n    return parser.parse_known_args()[0]\n\n\nq = parse()\n" + _body("q"),
}
LINES = {"short_name": 8, "other_name": 8, "known_args": 8, "helper": 16, "helper_known": 14}


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_a_parse_result_of_any_name_holds_the_options_default(write_project, spelling):
    r = scan_path(write_project({"train.py": SPELLINGS[spelling], "requirements.txt": "torch\n"}))
    # the option keeps its default None on a Mac: the CUDA call in the branch runs there and limits
    assert rows(r) == [("API102", "train.py", LINES[spelling], "blocker")]
    [f] = r.findings
    assert f.evidence.get("mac_never") is None
    assert r.outlook.value == "mac_for_dev"


def test_the_option_s_fact_is_the_one_named(write_project):
    # the same file with `is not None`: the branch a Mac never enters, by the option's default (not a tensor's device)
    src = HEAD + "a = parser.parse_args()\nif a.device is not None:\n    torch.cuda.synchronize()\n"
    r = scan_path(write_project({"train.py": src, "requirements.txt": "torch\n"}))
    assert rows(r) == [("API102", "train.py", 8, "info")]
    assert r.findings[0].evidence["mac_never"] == {
        "test": "a.device is not None", "line": 7, "value": "False",
        "facts": ["--device defaults to None (GPU ids: a Mac names none)"]}
    assert r.outlook.value == "runs_on_mac"


def test_an_object_named_args_that_is_no_parse_result_holds_no_option(write_project):
    # look-alike: `args` holds a tensor; its `.device` is not the option, so the test stays open and the CUDA call
    # still limits (before, the option's default decided it)
    src = HEAD + "parser.parse_args()\nargs = torch.zeros(2)\nif args.device is not None:\n" \
        "    torch.cuda.synchronize()\n"
    r = scan_path(write_project({"train.py": src, "requirements.txt": "torch\n"}))
    assert rows(r) == [("API102", "train.py", 9, "blocker")]
    assert r.findings[0].evidence.get("mac_never") is None
    assert r.outlook.value == "mac_for_dev"


# ---------------------------------------------------------------- one caller pass, "no caller" first
HELPERS = ("import torch\n\n\ndef other():\n    return 1\n\n\ndef fast(x, flash=False):\n    if flash:\n"
           "        torch.cuda.synchronize()\n    return x\n")


def _reach(r):
    return [(f.code, f.location.line, f.reach, f.behind_flag, f.evidence.get("uncalled")) for f in r.findings]


def test_a_function_nothing_names_is_judged_by_its_missing_caller_first(write_project):
    # the limit sits behind an off-by-default parameter, but nothing calls the function at all: the first case of
    # the one caller pass (model/callers.py: caller_reach) says so (before round 8 the parameter's default spoke)
    r = scan_path(write_project({"run.py": "from helpers import other\n\nother()\n", "helpers.py": HELPERS,
                                 "requirements.txt": "torch\n"}))
    assert _reach(r) == [("API102", 10, "off_main_path", None, "fast() is called or named by no file of the project")]
    assert r.outlook.value == "runs_on_mac"


def test_a_called_function_behind_an_off_parameter_keeps_the_parameter_s_reason(write_project):
    # look-alike: run.py calls fast(); the caller pass leaves it, and the parameter's default marks it as before
    r = scan_path(write_project({"run.py": "from helpers import fast\n\nfast(1)\n", "helpers.py": HELPERS,
                                 "requirements.txt": "torch\n"}))
    assert _reach(r) == [("API102", 10, None, "flash=False (the default)", None)]
    assert r.outlook.value == "runs_on_mac"
