"""The ``mpsready run`` result document (schema ``mpsready.run``, version 1).

Fields (every value predicted, none observed on a Mac):

* ``basis``: ``"emulated"``, a kind of ``predicted`` evidence (``basis_class``): the program ran here on an
  emulated MPS device; numerics, speed and memory of a Mac are not reproduced;
* ``target``: ``torch`` (the table release answered for), ``torch_requested``, ``macos``, ``fallback``
  (``PYTORCH_ENABLE_MPS_FALLBACK=1`` assumed), ``mps_available`` (what ``torch.backends.mps.is_available()`` said),
  ``torch_version_seen`` {``value``: the ``torch.__version__`` the program's own files read, the target's (``"2.5.1"``,
  no local suffix: a prediction of the Mac wheel's identity), ``installed``: this build's, which PyTorch's and
  mpsready's own code kept seeing, ``read``: whether the program read it};
* ``program``: ``kind`` (script | module | notebook), ``target``, ``argv``;
* ``outcome``: ``completed`` | ``unverified`` (it ran to its end with no predicted failure, but a call on its
  path was judged on no data or a compiled region could not be vouched for: see ``unverified``) | ``failed``
  (a predicted Mac failure) | ``stopped`` (``stop_reason`` says why: ``--max-steps``/``--time-limit``) |
  ``inconclusive`` (the program ended on an exception the emulated Mac did not raise: see ``program_error``;
  the run proves nothing about the Mac beyond the point reached);
* ``unverified``: every call on the program's path judged on no data (an op the target's table does not know,
  ``kind`` ``unknown``; a failing callee of a composite that another release decomposes, ``kind``
  ``callee_of_other_release``) and every region compiled by ``torch.compile`` that the emulated Mac cannot
  vouch for (``kind`` ``compile``): ``op``, ``reason``, ``location``, ``calls``. When any is present, a run that
  would have been ``completed`` (or ``stopped``) is ``unverified``: nothing failed, but not everything it ran
  was judged on data;
* ``judged``: the calls judged on the emulated device by what the judgement rests on (``Judge.basis``):
  ``facts`` (a fact of the release's data), ``defaults`` (an MPS kernel exists, no dtype fact: every allowed
  dtype assumed to work), ``none`` (no data);
* ``failures``: the predicted Mac failures (more than one only with ``--keep-going``), each with ``mac`` true,
  ``kind`` (a judge kind: missing, dtype, sparse, shape, guard, macos, autocast; release_api or compile, the
  target release's Python checks, emulate/release_api.py; or cuda_api, mps_api,
  mps_unavailable), ``op``, ``dtype``, ``exception``, ``message``, ``location`` {path, line, function},
  ``stack``, ``fixed_in``;
* ``program_error``: the exception that ended the program when the emulator neither raised nor marked it, with
  ``mac`` false, ``kind`` ``environment`` (ImportError, ModuleNotFoundError, FileNotFoundError; ``missing``
  names the module or file), ``program_error`` or ``exit`` (a non-zero ``sys.exit``); or null;
* ``first_failure``: ``failures[0]``, else ``program_error``, else null (read ``mac`` before calling it a Mac
  failure);
* ``fallbacks``: per op ``calls``, ``seconds`` (CPU time here) and ``share`` of the run's wall time (0..1);
* ``predictions``: every judged MPS op with ``outcome`` (runs, composite, error, fallback, crash, unknown),
  ``kind``, ``dtypes``, ``calls``, ``seconds``;
* ``mps_used``: whether any tensor reached the MPS device (False: on a Mac the program would run on the CPU);
* ``children``: the program's child processes that ran on the emulated Mac (spawned, forked, a Pool's workers,
  ``torch.multiprocessing.spawn``) and wrote their account when they ended: ``reported``, ``mps_used`` (how many
  put a tensor on MPS; any makes ``mps_used`` true) and ``failed`` (how many hit a Mac failure; the first is the
  run's failure when the program's own process had none, its message ending "raised in a child process of the
  program, pid N");
* ``steps`` (optimizer steps seen), ``seconds`` (wall time of the program), ``memory`` (emulated);
* ``wrong_results``: calls that complete on the Mac but match a known silent wrong-result advisory
  (``mpsready/ops/data/curated/mps_wrong_results.yaml``, :mod:`mpsready.ops.advisories`): per advisory and user's
  line ``id``, ``op``, ``dtype``, ``summary``, ``condition``, ``torch``/``macos`` (the affected range), ``fixed_in``,
  ``report`` and ``source`` (public PyTorch issue / PR), ``location``, ``calls``, ``basis`` ``predicted``. A run
  with wrong results keeps its ``outcome`` (``completed``): the program runs, its numbers are predicted wrong;
* ``program_exit``: ``{"how": "os._exit", "status": N, "note": ...}`` when the program ended its process with
  ``os._exit(N)`` (the result is written then; a status 0 is ``completed``, another ``inconclusive`` with a
  ``program_error`` of kind ``exit``), else null;
* ``exit_code``: what ``mpsready run`` returns: 0 no predicted failure and no predicted wrong result, 1 predicted
  failure(s) or predicted wrong result(s) (a completed run with ``wrong_results`` returns 1: "it runs" is not "it
  is right"), 2 neither but the run is ``inconclusive`` (the program or its environment stopped it: like a usage
  or input error, the command given could not be judged), 4 the run is ``unverified`` (nothing predicted to
  fail, but not everything judged on data: never read it as "it works");
* ``nan_check``, ``checked`` (results checked), ``first_nonfinite`` (the first op whose result held NaN/Inf from
  finite inputs: ``op``, ``dtype``, ``stage``, ``step``, ``location``, ``nan``, ``inf``, ``inputs`` statistics;
  or null), ``dynamic_shapes`` (ops whose input shapes changed in most steps at one line), ``steps_observed``
  ``masked``, ``degenerate`` (std of one value: NUM305 info), ``skipped``/``skipped_kinds`` (values the watch could
  not read) and ``findings`` (NUM301, NUM305, PRF301; basis ``predicted``), from :mod:`mpsready.numerics.hooks`. They do not
  change ``outcome`` or ``exit_code``.
"""

from __future__ import annotations

from typing import Any

from mpsready.schema import check_envelope, envelope

SCHEMA = "mpsready.run"
VERSION = 1
OUTCOMES = ("completed", "unverified", "failed", "stopped", "inconclusive")
# exit codes of ``mpsready run`` (docs/emulation.md "Output and exit codes")
EXIT_CLEAN, EXIT_FAILED, EXIT_INCONCLUSIVE, EXIT_NO_RESULT, EXIT_UNVERIFIED = 0, 1, 2, 3, 4
# Failure kinds that are not a Mac prediction (documents written before ``mac`` was recorded carry only these).
NOT_MAC_KINDS = ("environment", "program_error", "exit")
LIMITS = ("numerics are this CPU's, not MPS kernels'", "speed and memory are not a Mac's",
          "C++/CUDA extensions and torch.compile are not emulated")


def build_document(spec: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    emu = result["emu"]
    failures = [{**f.to_dict(), "mac": True} for f in emu.failures]
    if getattr(emu.judge, "machine", "arm64") == "x86_64":
        for f in failures:  # no later release reaches an Intel Mac: the fix is for Apple silicon only
            if f.get("fixed_in"):
                f["fixed_in_apple_silicon"], f["fixed_in"] = f["fixed_in"], None
    if result.get("error"):
        err = dict(result["error"])
        err.setdefault("op", None)
        err.setdefault("dtype", None)
        err["basis"] = "predicted"
        err["mac"] = True
        failures.append(err)
    # no basis: it is a fact of this machine and this program, neither a prediction nor an observation of a Mac
    program_error = dict(result["program_error"]) if result.get("program_error") else None
    total = result["seconds"] or 0.0
    fallbacks = [{"op": r.named or r.op, "kind": r.kind, "calls": r.calls, "seconds": round(r.seconds, 6),
                  "share": round(min(1.0, r.seconds / total), 4) if total else 0.0, "dtypes": r.dtypes,
                  "fixed_in": r.fixed_in, "message": r.message,
                  "location": r.frame.to_dict() if r.frame else None}
                 for r in emu.fallbacks()]
    order = {"error": 0, "crash": 0, "fallback": 1, "unknown": 2, "runs": 3, "composite": 4}
    preds = sorted(emu.records.values(), key=lambda r: (order.get(r.outcome, 9), r.op))
    predictions = [{"op": r.named or r.op, "outcome": r.outcome, "kind": r.kind, "dtypes": r.dtypes,
                    "calls": r.calls, "seconds": round(r.seconds, 6), "fixed_in": r.fixed_in,
                    **({"location": r.frame.to_dict()} if r.frame and r.outcome != "runs" else {})}
                   for r in preds]
    outcome = result["outcome"]
    children = {"reported": 0, "mps_used": 0, "failed": 0, **(result.get("children") or {})}
    if failures:
        outcome = "failed"
    unverified = emu.unverified() if hasattr(emu, "unverified") else []
    if unverified and outcome in ("completed", "stopped"):
        outcome = "unverified"  # never "completed" on a call judged on no data (issue 33)
    wrong_results = [dict(w) for w in getattr(emu, "wrong_results", [])]
    exit_code = (EXIT_FAILED if failures or wrong_results else EXIT_INCONCLUSIVE if outcome == "inconclusive"
                 else EXIT_UNVERIFIED if outcome == "unverified" else EXIT_CLEAN)
    tgt = spec["target"]
    return envelope(
        SCHEMA, VERSION,
        basis="emulated", basis_class="predicted",
        target={"torch": emu.judge.torch, "torch_requested": tgt["torch"], "macos": tgt["macos"],
                "fallback": emu.judge.fallback, "fallback_requested": bool(tgt["fallback"]),
                "mps_available": emu.judge.available, "machine": emu.judge.machine,
                "torch_version_seen": _version_seen(emu)},
        program={k: v for k, v in spec["program"].items() if k != "root"},
        settings={"keep_going": bool(spec.get("keep_going")), "max_steps": spec.get("max_steps"),
                  "time_limit": spec.get("time_limit")},
        outcome=outcome,
        stop_reason=emu.stop_reason if outcome in ("stopped", "unverified") or emu.stop_reason else None,
        first_failure=failures[0] if failures else program_error,
        failures=failures,
        program_error=program_error,
        fallbacks=fallbacks,
        wrong_results=wrong_results,
        predictions=predictions,
        unverified=unverified,
        judged=emu.judged_by_basis() if hasattr(emu, "judged_by_basis") else {"facts": 0, "defaults": 0, "none": 0},
        # False: nothing reached the MPS device (the program ran on the CPU)
        mps_used=bool(predictions) or getattr(emu, "placed", 0) > 0 or bool(children.get("mps_used")),
        children=children,
        steps=emu.steps,
        seconds=round(total, 3),
        memory={"emulated": True, "queried": emu.memory_queried},
        autocast={"used": emu.autocast_used, "list_known": emu.judge.autocast_known,
                  "note": None if emu.judge.autocast_known or not emu.autocast_used or emu.failures_of("autocast") else
                  f"the AutocastMPS list of torch {emu.judge.torch} is not shipped: the region ran uncast here"},
        exit_code=exit_code,
        program_exit=result.get("program_exit"),
        limits=list(LIMITS),
        **_numerics(result.get("numerics")),
    )


def _version_seen(emu: Any) -> dict[str, Any]:
    """What ``torch.__version__`` said to the program (the target's, emulate/release_api.py) and to PyTorch."""
    import torch

    from mpsready.emulate.release_api import target_version

    return {"value": target_version(emu), "installed": str(torch.version.__version__),
            "read": bool(getattr(emu, "version_seen", False))}


def _numerics(watch: Any) -> dict[str, Any]:
    """``nan_check``, ``first_nonfinite``, ``dynamic_shapes``, ``steps_observed`` and ``findings`` (NUM301, PRF301)
    of a :class:`mpsready.numerics.hooks.RunWatch` (absent without one)."""
    if watch is None:
        return {}
    return {**watch.to_dict(), "findings": [f.to_dict() for f in watch.findings()]}


def is_mac_failure(entry: dict[str, Any]) -> bool:
    """Whether a failure entry is a predicted Mac failure: its ``mac`` flag, or for older documents its kind."""
    if isinstance(entry.get("mac"), bool):
        return entry["mac"]
    return entry.get("kind") not in NOT_MAC_KINDS


def load_document(doc: Any) -> dict[str, Any]:
    """Check a loaded run document; raises ``ValueError`` with a clear message."""
    check_envelope(doc, SCHEMA, VERSION)
    for key in ("outcome", "target", "fallbacks", "predictions", "first_failure"):
        if key not in doc:
            raise ValueError(f"run document lacks {key!r}")
    if doc["outcome"] not in OUTCOMES:
        raise ValueError(f"run document outcome {doc['outcome']!r} is not one of {', '.join(OUTCOMES)}")
    return doc
