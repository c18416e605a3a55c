"""Which findings ``mpsready migrate`` fixes: the auto-fix docs of the rule registry and the effort buckets.

The one source of "migrate makes this edit": :data:`FIXES` registers an AutoFix for each code a transform
answers (``docs/rules.md`` renders them), :func:`bucket` refines it per finding from the scan's evidence and
message, and the scan's effort line and its outlook ("migrate can make it", :mod:`mpsready.scan.model.remedy`)
both read :func:`buckets`. Imports nothing heavy (no libcst), so ``scan`` and ``report`` count cheaply.

The effort is an **estimate**: it is computed from the findings alone, while ``mpsready migrate`` decides on
the syntax tree. The two agree on the test fixtures (tests/migrate/test_effort.py); on real code migrate may
still list a finding as manual when the code around it has an unusual shape (it then says why), may find a
CUDA check the scan did not (the finding is then left as it is), and makes edits no scan finding asks for
(``torch.load`` without ``map_location``, guarded imports, CPU-keyed fallbacks the scan does not report).

Codes decided apart from the transforms: API121 (a config file's ``device: cuda``) is a config value, not a
code edit: the outlook prints the override and migrate edits no config file (bucket ``other``); API120
(``assert x.is_cuda``) and EXT109 (an unwired pure-PyTorch path) need a device dispatch written by a person
(manual); dependency findings such as DEP111 (a pin below Mac support) are declared-dependency changes, not
code (bucket ``other``).
"""

from __future__ import annotations

from typing import Iterable

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from mpsready import rules as registry
from mpsready.findings import Finding
from mpsready.rules import AutoFix

CODE_PREFIXES = ("API", "DTY", "EXT")

# API102 names rewritten as a statement (the MPS statement, None: only the CUDA guard) or inside an expression
STATEMENTS = {
    "synchronize": "torch.mps.synchronize()",
    "empty_cache": "torch.mps.empty_cache()",
    "manual_seed": "torch.mps.manual_seed({args})",
    "manual_seed_all": "torch.mps.manual_seed({args})",
    "seed": "torch.mps.seed()",
    "seed_all": "torch.mps.seed()",
    "set_device": None,
    "reset_peak_memory_stats": None,
    "reset_max_memory_allocated": None,
    "set_per_process_memory_fraction": None,
    "ipc_collect": None,
}
QUERIES = {
    "memory_allocated": "torch.mps.current_allocated_memory()",
    "memory_reserved": "torch.mps.driver_allocated_memory()",
}
KEPT = {
    "API105": "cuDNN switches do nothing on a Mac and never raise: left as they are",
    "API106": "TF32 switches do nothing on a Mac and never raise: left as they are",
    "API114": "torch.compile is a choice for the Mac run (a flag), not a mechanical edit",
    "API117": "a device generator is a reproducibility choice, not a mechanical edit",
}
# info-level findings of these rules need no change on a Mac: they count as kept. migrate still adds the torch.mps
# equivalent beside them where it can, as an edit no finding requires; the re-scan reports them as info again
# (inside the CUDA check it adds), so counting them as fixed would promise a change the re-scan never shows.
HARMLESS_WHEN_INFO = {
    "API102": "harmless on a Mac (does nothing there); migrate adds the torch.mps equivalent where one exists",
}
# code findings that are not code edits (bucket "other"): the scan's outlook prints the flag or config change
NOT_CODE = {
    "API121": "a config value: override it for the Mac run (the outlook prints the override); migrate edits no "
              "config file",
}
# legacy torch.cuda tensor types API119 rewrites (the others change the default dtype too: manual)
DEFAULT_TYPES = ("torch.cuda.FloatTensor",)

FIXES = {
    "API101": AutoFix("`.cuda()` / `.cuda(i)` become `.to(...)` the device the code around it already uses: the variable "
                      "`device` in scope (or the one the migrated selection binds), `self.device`, a module input's "
                      "`.device` inside a `Module`'s methods; in a project without a device selection of its own, a "
                      "small helper `_mpsready_device(i)` added once per file (CUDA with the same index, then MPS, then "
                      "CPU). Where the project selects its device and the code cannot see that choice, the finding is "
                      "manual (an independent choice would mix devices).",
                      "model = Net().cuda()\nx = x.cuda(1)", "model = Net().to(_mpsready_device())\nx = x.to(_mpsready_device(1))"),
    "API102": AutoFix("`synchronize`, `empty_cache`, `manual_seed(_all)`, `seed(_all)` statements are put behind "
                      "`torch.cuda.is_available()` with the `torch.mps` equivalent in an `elif`; setters without one "
                      "(`set_device`, `reset_peak_memory_stats`) get the guard alone; `memory_allocated`/`memory_reserved` "
                      "in expressions fall back to `torch.mps.current_allocated_memory()`/`driver_allocated_memory()` "
                      "(info-level calls are harmless on a Mac and count as needing no change; they get the same "
                      "edit). "
                      "`torch.cuda.FloatTensor` as the argument of `set_default_tensor_type` is fixed with API119. "
                      "Other names (device properties, streams, legacy tensor types) stay manual.",
                      "torch.cuda.synchronize()",
                      "if torch.cuda.is_available():\n    torch.cuda.synchronize()\n"
                      "elif torch.backends.mps.is_available():\n    torch.mps.synchronize()"),
    "API103": AutoFix("CUDA literals become the selected device: the variable `device` in scope or "
                      "`_mpsready_device()`; a string stays a string (`str(_mpsready_device())`); a device string "
                      "built at run time (`f'cuda:{rank}'`, `'cuda:{}'.format(rank)`) becomes "
                      "`_mpsready_device(int(rank))`; an argparse device default's literal `choices` gain `'mps'`. `torch.load` without "
                      "`map_location` gets one (found by migrate itself: no scan rule can see the checkpoint).",
                      "device = 'cuda'\nx = torch.zeros(3, device='cuda')\nstate = torch.load(path)",
                      "device = str(_mpsready_device())\nx = torch.zeros(3, device=device)\n"
                      "state = torch.load(path, map_location=device)"),
    "API104": AutoFix("The selection gets an MPS branch after CUDA (CUDA keeps priority and its exact test; the MPS "
                      "test keeps the rest of it, so `--no-cuda` still forces the CPU): conditional expressions, if/else "
                      "with several statements per branch, functions returning the device, and CUDA switches "
                      "(`args.cuda = not args.no_cuda and torch.cuda.is_available()`), whose `if args.cuda:` guards of "
                      "`.cuda()` moves then move to the selected device; with a PyTorch floor of 2.6 or newer a plain "
                      "`torch.cuda.is_available()` choice uses `torch.accelerator`.",
                      "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')",
                      "device = torch.device('cuda' if torch.cuda.is_available() else 'mps' if "
                      "torch.backends.mps.is_available() else 'cpu')"),
    "API107": AutoFix("A literal `'nccl'` backend becomes `'nccl'` on CUDA, `'gloo'` otherwise.",
                      "dist.init_process_group('nccl')",
                      "dist.init_process_group('nccl' if torch.cuda.is_available() else 'gloo')"),
    "API108": AutoFix("`torch.cuda.amp.autocast`/`GradScaler` (and `from torch.cuda.amp import ...`) become `torch.amp`; "
                      "positional autocast arguments become keywords (the order differs). Where the project's PyTorch "
                      "floor has what MPS needs (autocast: 2.5.1, GradScaler: 2.8.0 in the shipped ops tables) the "
                      "device type is the selected device's and `enabled` is gated `!= 'cpu'` (the edit is marked as "
                      "changing the Mac path); below it, or without a floor, the device type stays `'cuda'` (off "
                      "without CUDA, as the original: `torch.amp.autocast('mps')` raises before 2.5 even when "
                      "disabled) and a manual entry says which floor turns MPS on; `torch.cuda.amp.GradScaler` stays "
                      "under a floor below 2.3 (no `torch.amp.GradScaler` there). The example has no floor declared.",
                      "with torch.cuda.amp.autocast():\n    out = model(x)",
                      "with torch.amp.autocast('cuda'):\n    out = model(x)"),
    "API109": AutoFix("With a PyTorch floor that has GradScaler on MPS (2.8.0), `GradScaler()` without a device gets the "
                      "selected device's type (and the CPU gate of API108); below it the call is already what the Mac "
                      "path can run (manual: declare the floor to turn MPS on).",
                      "scaler = torch.amp.GradScaler()",
                      "scaler = torch.amp.GradScaler(torch.device(device).type, enabled=torch.device(device).type != 'cpu')  # torch>=2.8"),
    "API113": AutoFix("`pin_memory=True` becomes `pin_memory=torch.cuda.is_available()`; `.pin_memory()` calls stay manual.",
                      "DataLoader(ds, pin_memory=True)", "DataLoader(ds, pin_memory=torch.cuda.is_available())"),
    "API115": AutoFix("The string test becomes `torch.device(s).type`, so MPS is classified as 'mps' (marked as "
                      "changing the Mac path). In a file that calls autocast or GradScaler it is left as it is "
                      "(manual) unless the project's PyTorch floor has what they need on MPS.",
                      "device_type = 'cuda' if 'cuda' in device else 'cpu'",
                      "device_type = torch.device(device).type"),
    "API119": AutoFix("`set_default_tensor_type(\"torch.cuda.FloatTensor\")` (string or class) and "
                      "`set_default_device(\"cuda\")` become `torch.set_default_device(...)` with the variable "
                      "`device` in scope, else `_mpsready_device()` (`\"cuda:N\"` keeps its index). Other legacy "
                      "CUDA tensor types change the default dtype too and stay manual.",
                      "torch.set_default_tensor_type('torch.cuda.FloatTensor')\ntorch.set_default_device('cuda:1')",
                      "torch.set_default_device(_mpsready_device())\ntorch.set_default_device(_mpsready_device(1))"),
    # DEP107 only for the docs: dependency findings are not counted in the code effort (bucket "other")
    "DEP107": AutoFix("When the importing file already falls back on the name being None (`if X is not None:`), a "
                      "module-level import of the CUDA-only package becomes `try: import X` / `except ImportError: X = "
                      "None`; the same is done for in-repo CUDA extensions (`*_cuda`, `*_C` modules). Other imports "
                      "stay manual.",
                      "import flash_attn\n\ndef attend(q, k, v):\n    if flash_attn is None:\n"
                      "        return F.scaled_dot_product_attention(q, k, v)\n    return flash_attn.flash_attn_func(q, k, v)",
                      "try:\n    import flash_attn\nexcept ImportError:\n    flash_attn = None\n\ndef attend(q, k, v):\n"
                      "    if flash_attn is None:\n        return F.scaled_dot_product_attention(q, k, v)\n"
                      "    return flash_attn.flash_attn_func(q, k, v)"),
    "EXT108": AutoFix("The CPU test of the fallback becomes `x.device.type != 'cuda'` (also for `str(x.device) == "
                      "'cpu'` and `x.device == torch.device('cpu')`), so MPS tensors take the pure-PyTorch path and "
                      "CUDA and the CPU choose as before. migrate also finds `.type == 'cpu'` tests whose other branch "
                      "calls a CUDA-only name (`_C.*`, `*_cuda`) that the scan does not report. The extension's "
                      "import stays as it is (DEP107/EXT102).",
                      "if input.device.type == 'cpu':\n    out = upfirdn2d_native(input, kernel)\nelse:\n"
                      "    out = UpFirDn2d.apply(input, kernel)",
                      "if input.device.type != 'cuda':\n    out = upfirdn2d_native(input, kernel)\nelse:\n"
                      "    out = UpFirDn2d.apply(input, kernel)"),
    "DTY102": AutoFix("When a float32 cast follows the move, the cast moves before it (same float32 value, no "
                      "float64 on the device); without a cast the finding is listed for the user.",
                      "feats = torch.from_numpy(table).to(dev).float()", "feats = torch.from_numpy(table).float().to(dev)"),
}

for _code, _fix in FIXES.items():
    registry.register_autofix(_code, _fix)


def _one_placeholder(message: str) -> bool:
    """Whether the run-time device string the scan shows (``'cuda:{rank}'``, ``'cuda:{}'``: f-strings and
    ``str.format`` calls) has one placeholder and nothing else, the form the API103 transform rewrites."""
    shown = message.split("'cuda:", 1)[1].split("'", 1)[0]
    return shown.startswith("{") and shown.endswith("}") and shown.count("{") == 1


Floor = tuple[int, int] | None


def declared_floor(dependencies: Iterable) -> Floor:
    """The lowest (major, minor) PyTorch the project's declarations (scan ``Dependency`` records) allow; ``None``
    without a lower bound."""
    floors: list[tuple[int, int]] = []
    for dep in dependencies:
        if dep.name.lower() != "torch" or dep.optional:
            continue
        try:
            spec = SpecifierSet(dep.specifier.split(";")[0].strip())
        except InvalidSpecifier:
            continue
        for s in spec:
            if s.operator in (">=", "==", "~=", ">"):
                parts = s.version.split(".")
                if len(parts) >= 2 and parts[0].isdigit() and parts[1].split("+")[0].isdigit():
                    floors.append((int(parts[0]), int(parts[1].split("+")[0])))
    return min(floors) if floors else None


def _amp_below_floor(f: Finding, floor: Floor) -> str | None:
    """Why migrate leaves an API108/API109 finding for a person at this PyTorch floor, or ``None``: below the
    release where MPS has it, a CUDA-typed autocast/GradScaler call is already what the Mac path can run (no
    edit), and ``torch.amp.GradScaler`` needs PyTorch 2.3 (the transform: transforms/amp.py)."""
    from mpsready.migrate.mac_path import (TORCH_AMP_GRADSCALER, autocast_release, floor_allows, floor_text,
                                           gradscaler_release)

    api = str((f.evidence or {}).get("api", ""))
    kind = "GradScaler" if "GradScaler" in (api or f.message.split(":", 1)[0]) else "autocast"
    release = gradscaler_release() if kind == "GradScaler" else autocast_release()
    if floor_allows(floor, release):
        return None
    if not api.startswith("torch.cuda.amp."):
        return (f"{kind} left off on MPS (on CUDA only, as before): on MPS it needs PyTorch {release} and the "
                f"PyTorch floor is {floor_text(floor)}")
    if kind == "GradScaler" and floor is not None and floor < TORCH_AMP_GRADSCALER:
        return f"torch.amp.GradScaler exists from PyTorch 2.3 and the floor is {floor_text(floor)}"
    return None


def _amp_test_below_floor(kinds: list[str], floor: Floor) -> str | None:
    """Why migrate keeps an API115 test in a file calling ``kinds`` (autocast, GradScaler) at this floor, or
    ``None`` when the floor has them on MPS (transforms/device_string_test.py)."""
    from mpsready.migrate.mac_path import autocast_release, floor_allows, floor_text, gradscaler_release

    need = {"autocast": autocast_release(), "GradScaler": gradscaler_release()}
    missing = [k for k in kinds if not floor_allows(floor, need.get(k))]
    if not missing:
        return None
    return ("left as it is, to keep the Mac path: the file calls " + " and ".join(missing) + ", which MPS has from "
            + ", ".join(f"{k} {need[k]}" for k in missing) + f", and the PyTorch floor is {floor_text(floor)}")


def bucket(f: Finding, floor: Floor = None) -> tuple[str, str]:
    """``("auto", what)``, ``("manual", why)``, ``("kept", why)`` or ``("other", "")`` (not a code finding).
    ``floor``: the project's declared PyTorch floor (:func:`declared_floor`; ``None``: not declared), which decides
    the API108/API109 edits."""
    if not f.code.startswith(CODE_PREFIXES) or not f.location.path:
        return "other", ""
    ev = f.evidence or {}
    if ev.get("guarded"):
        return "kept", "already behind a CUDA check: skipped on a Mac"
    if f.code in NOT_CODE:
        return "other", NOT_CODE[f.code]
    if f.code in KEPT:
        return "kept", KEPT[f.code]
    if f.code in HARMLESS_WHEN_INFO and f.severity.value == "info":
        return "kept", HARMLESS_WHEN_INFO[f.code]
    if f.code == "API102":
        attr = str(ev.get("api", "")).split(".")[2:3]
        if attr and (attr[0] in STATEMENTS or attr[0] in QUERIES):
            return "auto", FIXES["API102"].summary
        alt = ev.get("mps") or ev.get("accelerator")
        return "manual", f"{ev.get('api', 'this torch.cuda name')} has no drop-in MPS equivalent" + (
            f" (closest: {alt})" if alt else "")
    if f.code == "API113" and f.message.startswith(".pin_memory()"):
        # the scan's message names the method form: without an accelerator Tensor.pin_memory() raises
        # ("Cannot access accelerator device when none is available", PyTorch 2.13.0 CPU build)
        return "manual", "Tensor.pin_memory() raises without an accelerator: call it only when torch.cuda.is_available()"
    if f.code == "API119" and not (f.message.startswith("set_default_device(")
                                   or any(f"{t!r}" in f.message for t in DEFAULT_TYPES)):
        return "manual", "this legacy CUDA tensor type changes the default dtype too: use torch.set_default_dtype(...) " \
                         "and torch.set_default_device(...)"
    if f.code in ("API108", "API109"):
        why = _amp_below_floor(f, floor)
        if why is not None:
            return "manual", why
    if f.code == "API115" and ev.get("amp_calls"):
        why = _amp_test_below_floor(list(ev["amp_calls"]), floor)
        if why is not None:
            return "manual", why
    if f.code == "DTY102" and not ev.get("cast_after_move"):
        return "manual", ("float64 reaches the device with no float32 cast after it: check the value is not needed in "
                          "float64 later, then add .float() before .to()")
    if f.code == "API103" and "'cuda:{" in f.message and not _one_placeholder(f.message):
        return "manual", "the CUDA device string is built at run time from more than one value: select the device instead"
    if f.code in ("API103", "API107") and "assigned at line" in f.message:
        # the scan's message says the literal reaches the call through a variable: migrate leaves that to a person
        return "manual", "the CUDA device or backend comes from a variable assigned elsewhere: change that assignment"
    if f.code in FIXES:
        return "auto", FIXES[f.code].summary
    try:
        fix = registry.get(f.code).fix
    except KeyError:
        fix = "see the rule"
    return "manual", fix


def buckets(findings: Iterable[Finding], floor: Floor = None) -> list[tuple[Finding, str, str]]:
    """``(finding, kind, why)`` for each finding: :func:`bucket`, plus what one edit fixes for two findings: the
    API102 finding on the ``torch.cuda.FloatTensor`` argument of a ``set_default_tensor_type`` call that API119
    rewrites is fixed by that edit."""
    findings = list(findings)
    out = [(f, *bucket(f, floor)) for f in findings]
    api119 = {(f.location.path, f.location.line) for f, kind, _ in out if f.code == "API119" and kind == "auto"}
    for i, (f, kind, why) in enumerate(out):
        if f.code == "API102" and kind == "manual" and (f.evidence or {}).get("api") in DEFAULT_TYPES \
                and (f.location.path, f.location.line) in api119:
            out[i] = (f, "auto", "fixed by the API119 edit of the same set_default_tensor_type call")
    return out


def effort(findings: Iterable[Finding], floor: Floor = None) -> dict[str, int]:
    """``{"auto_fixable", "manual", "kept", "files_touched"}`` over the code findings: an **estimate** of what
    ``mpsready migrate`` will do (see the module doc); ``files_touched`` counts the files with an auto-fixable
    finding (migrate may touch more, for the edits no scan finding asks for)."""
    out = {"auto_fixable": 0, "manual": 0, "kept": 0, "files_touched": 0}
    files: set[str] = set()
    for f, kind, _ in buckets(findings, floor):
        if kind == "auto":
            out["auto_fixable"] += 1
            files.add(f.location.path or "")
        elif kind in ("manual", "kept"):
            out[kind] += 1
    out["files_touched"] = len(files)
    return out


def effort_line(findings: Iterable[Finding], floor: Floor = None) -> str:
    """One sentence for the scan's terminal and Markdown outputs (labelled an estimate: migrate gives the plan)."""
    e = effort(findings, floor)
    return (f"migrate effort (estimate): {e['auto_fixable']} auto-fixable finding(s) in {e['files_touched']} file(s) "
            f"(`mpsready migrate PATH` shows the diff), {e['manual']} manual, {e['kept']} need no change")
