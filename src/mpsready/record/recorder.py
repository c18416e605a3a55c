"""``record_entry``: run an entry on a device in a child process and write one run record.

The parent never imports the user's code. It starts ``python -m mpsready.record.worker``
(:mod:`mpsready.record.worker`), waits, then reads the events the child streamed. When the
child died (a signal, ``abort()``, a timeout) the stage that had started and not finished is
reported ``crashed`` with the signal, and the stages after it ``not_run``.

The record is written into a temporary directory next to ``out`` and renamed into place only when it
is complete, so a crash or kill of ``mpsready record`` leaves the previous record (``--force``) as it
was. The worker runs in its own session and process group with everything the step starts
(DataLoader workers, ``subprocess`` calls); the group is ended together on the timeout (default
:data:`DEFAULT_TIMEOUT`), on SIGTERM/SIGINT/SIGHUP to the parent, when the worker exits, and when the
parent dies (the worker watches a pipe from the parent; on Linux also ``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from mpsready import childproc
from mpsready.errors import UsageError
from mpsready.record.layout import MANIFEST, RAW_DIR, SCHEMA_NAME, SCHEMA_VERSION, TENSORS, RunRecord, RecordError
from mpsready.record.layout import write_manifest
from mpsready.schema import envelope
from mpsready.step.contract import STAGES, WHOLE_STEP_STAGES, StageResult, StageStatus
from mpsready.step.entry import split_spec

DEVICES = ("cpu", "cuda", "mps")
STDERR_TAIL = 4000
DEFAULT_TIMEOUT = 1800.0  # seconds: a few recorded steps that take longer are hung, or not a representative step


def _check_device(device: str) -> None:
    kind, _, index = device.partition(":")
    if kind not in DEVICES or (index and not index.isdigit()) or (index and kind != "cuda"):
        raise UsageError(f"--device must be one of cpu, cuda, cuda:N, mps; got {device!r}")


def _load_synthetic(path: str) -> dict[str, Any]:
    """The ``inputs`` of a run record, or of an input spec file (schema ``mpsready.inputs`` v1, written by
    ``mpsready kit --record``: the record's input shapes, dtypes and ranges without the rest of the record)."""
    if Path(path).is_file() and Path(path).name != MANIFEST:
        inputs = _input_spec(path)
    else:
        try:
            prev = RunRecord.open(path)
        except RecordError as exc:
            raise UsageError(f"--synthetic-inputs: {exc}") from None
        inputs = prev.manifest.get("inputs")
    if not inputs or not inputs.get("structure") or not inputs.get("tensors"):
        raise UsageError(f"--synthetic-inputs: {path} records no input shapes (its data stage never passed)")
    return inputs


def _input_spec(path: str) -> Any:
    from mpsready import safeio
    from mpsready.schema import check_envelope

    try:
        doc = check_envelope(safeio.loads(safeio.read_text(path)), "mpsready.inputs", 1)
    except (OSError, ValueError, safeio.BadArtifact) as exc:
        raise UsageError(f"--synthetic-inputs: cannot read {path}: {exc}") from None
    return doc.get("inputs") if isinstance(doc.get("inputs"), dict) else None


def _signal_name(returncode: int) -> str:
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def read_events(path: Path) -> list[dict[str, Any]]:
    """Events the worker streamed; a last line cut short by the crash is dropped."""
    out: list[dict[str, Any]] = []
    if not path.exists():
        return out
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            break
    return out


def _repair_tensors(out: Path) -> int:
    """Drop a tensor line cut short by a crash; return the number of complete entries."""
    f = out / TENSORS
    if not f.exists():
        f.write_text("", encoding="utf-8")
        return 0
    lines = f.read_text(encoding="utf-8", errors="replace").splitlines()
    good = []
    for line in lines:
        try:
            json.loads(line)
        except json.JSONDecodeError:
            break
        good.append(line)
    if len(good) != len(lines):
        f.write_text("".join(x + "\n" for x in good), encoding="utf-8")
    return len(good)


def stages_from_events(events: list[dict[str, Any]], died: str | None) -> list[dict[str, Any]]:
    """Stage results: from the ``done`` event, or rebuilt after a crash (``died`` says how)."""
    done = next((e for e in events if e.get("event") == "done"), None)
    if done is not None:
        return done["stages"]
    whole = any(e.get("event") == "form" and e.get("whole") for e in events)
    order = WHOLE_STEP_STAGES if whole else STAGES
    results: dict[str, dict[str, Any]] = {}
    running: tuple[str, int] | None = None
    for e in events:
        if e.get("event") == "stage_started":
            running = (e["stage"], e.get("step", 0))
        elif e.get("event") == "stage_finished":
            running = None
            if e.get("result"):
                results[e["stage"]] = e["result"]
    crashed = running[0] if running else None
    if crashed is None:  # died outside a stage (loading torch, computing statistics): blame the next one
        crashed = next((s for s in order if s not in results), order[-1])
    out = []
    after = False
    for stage in order:
        prev = results.get(stage) or {}
        if stage == crashed:
            step = running[1] if running else 0
            out.append(StageResult(stage, StageStatus.CRASHED, seconds=prev.get("seconds", 0.0),
                                   error_type="ProcessCrash", error=f"the process died in stage {stage} "
                                   f"(step {step}): {died}", steps_run=prev.get("steps_run", 0)).to_dict())
            after = True
        elif not after and prev:
            out.append(prev)
        else:
            reason = f"the process crashed in {crashed}"
            if prev.get("steps_run"):
                reason += f" (it had {prev['status']} in {prev['steps_run']} earlier step(s))"
            out.append(StageResult(stage, StageStatus.NOT_RUN, seconds=prev.get("seconds", 0.0), reason=reason,
                                   steps_run=prev.get("steps_run", 0)).to_dict())
    return out


def record_entry(spec: str, device: str = "cpu", steps: int = 2, out: str | os.PathLike[str] = "run", *,
                 seed: int = 0, save_tensors: bool = False, synthetic_inputs: str | None = None,
                 dtype: str | None = None, project: str | None = None, cwd: str | None = None,
                 timeout: float | None = DEFAULT_TIMEOUT, force: bool = False, python: str | None = None,
                 isolate: bool = True, keep_output: bool = False, nan_check: bool = True,
                 save_inputs: str | None = None, label: str | None = None) -> RunRecord:
    """Record ``spec`` (an ENTRY) on ``device`` for ``steps`` steps into the directory ``out``.

    Returns the written :class:`~mpsready.record.layout.RunRecord`. Raises
    :class:`~mpsready.errors.UsageError` for a bad argument, an ENTRY that cannot be loaded, a
    device that is not available here (the MPS message gives the documented meaning of
    ``is_built``/``is_available``), ``dtype="float64"`` on MPS (MPS has no float64), or an
    existing non-empty ``out`` (unless ``force``). A stage that raises or kills the process
    is not an error: it is recorded (``failed`` / ``crashed``).

    ``isolate=False`` runs the worker in this process instead of a child (for debugging and
    fast tests): the record is the same, but a crash of the step then kills the caller and
    ``timeout`` is ignored. ``timeout=None`` waits for ever.

    The record holds statistics of tensors and the structure (types) of non-tensor batch values, never
    their contents; the worker's output and warning texts are kept only with ``keep_output`` (the record
    always counts the warnings by category, ``warning_counts``).

    ``nan_check`` (default on; ``--no-nan-check``): when a recorded tensor held NaN/Inf, the worker runs the
    steps again up to that step with every aten call checked, and the manifest's ``first_nonfinite`` names
    the first op whose result held NaN/Inf from finite inputs (:mod:`mpsready.record.numerics_hook`); the
    recorded step times carry none of it. ``save_inputs``: a module path
    (``"encoder.layers.0"``) whose inputs, output and state are saved per step for ``mpsready replay``
    (:mod:`mpsready.record.numerics_hook`). ``label``: the run's name (manifest ``label``), shown by compare
    and report beside the device.
    """
    if label is not None and (not label.strip() or len(label) > 80):
        raise UsageError(f"--label {label!r}: give a non-empty name of at most 80 characters")
    _check_arguments(spec, device, steps, seed, timeout, project, dtype, cwd)
    synthetic = _load_synthetic(synthetic_inputs) if synthetic_inputs else None
    out_p = Path(out)
    partial = _prepare_output(out_p, force)
    work = Path(tempfile.mkdtemp(prefix="mpsready-record-"))
    try:
        events_path = work / "events.jsonl"
        worker_spec = {"entry": spec, "device": device, "steps": steps, "seed": seed, "out": str(partial.resolve()),
                       "events": str(events_path), "cwd": str(Path(cwd or os.getcwd()).resolve()),
                       "save_tensors": save_tensors, "float64": dtype == "float64", "synthetic": synthetic,
                       "project": project, "keep_output": keep_output, "nan_check": nan_check,
                       "save_inputs": save_inputs}
        rc, timed_out, stderr_bytes, stderr_tail = _run_worker(worker_spec, work, partial, isolate, python,
                                                               timeout, keep_output)
        events = read_events(events_path)
        for e in events:
            if e.get("event") in ("entry_error", "device_error"):
                raise UsageError(e["message"])
        done = next((e for e in events if e.get("event") == "done"), None)
        died = None if done is not None else _how_it_died(timed_out, timeout, rc)
        stages = stages_from_events(events, died)
        manifest = _manifest(events, stages, spec=spec, device=device, steps=steps, seed=seed, dtype=dtype,
                             save_tensors=save_tensors, synthetic_inputs=synthetic_inputs,
                             worker={"isolated": isolate, "returncode": rc, "crashed": done is None, "how": died,
                                     "output_bytes": stderr_bytes,
                                     # the step's printed output may hold research data: kept only on request
                                     "output_tail": stderr_tail if keep_output else None})
        manifest = _finite(manifest)
        if label is not None:
            manifest["label"] = label.strip()
        manifest["tensor_count"] = _repair_tensors(partial)
        from mpsready.record.rules import evaluate

        manifest["findings"] = [f.to_dict() for f in evaluate(manifest, partial)]
        write_manifest(partial, manifest)
        _move_into_place(partial, out_p)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)  # the previous record, if any, is untouched
        raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return RunRecord.open(out_p)


def _run_worker(worker_spec: dict[str, Any], work: Path, partial: Path, isolate: bool, python: str | None,
                timeout: float | None, keep_output: bool) -> tuple[int, bool, int, str | None]:
    """Run the record worker on ``worker_spec`` (in a child unless ``isolate`` is false): its return code,
    whether it timed out, the size of its output (bytes) and, with ``keep_output``, the output's tail."""
    spec_path = work / "spec.json"
    spec_path.write_text(json.dumps(worker_spec), encoding="utf-8")
    env = dict(os.environ)
    stderr_path = work / "stderr.txt"
    stderr_path.write_bytes(b"")
    timed_out = False
    if not isolate:
        from mpsready.record import worker

        rc = worker.run(worker_spec)
    else:
        rc, timed_out = _spawn(python or sys.executable, spec_path, str(worker_spec["cwd"]), env, stderr_path,
                               timeout, cleanup=[str(work), str(partial)])
    stderr_bytes = stderr_path.stat().st_size
    stderr_tail = stderr_path.read_text(encoding="utf-8", errors="replace")[-STDERR_TAIL:] if keep_output else None
    return rc, timed_out, stderr_bytes, stderr_tail

def _check_arguments(spec: str, device: str, steps: int, seed: int, timeout: float | None, project: str | None,
                     dtype: str | None, cwd: str | None) -> None:
    """:func:`record_entry`'s argument checks (``UsageError``), made before the worker starts: otherwise each
    shows up as a crash of the user's step."""
    target, _ = split_spec(spec)
    if target.endswith(".py") and not (Path(cwd or os.getcwd()) / target).is_file():
        raise UsageError(f"entry file not found: {(Path(cwd or os.getcwd()) / target).resolve()}")
    _check_device(device)
    if steps < 1:
        raise UsageError("--steps must be >= 1")
    if not 0 <= seed < 2**32:  # numpy.random.seed takes 0 .. 2**32 - 1 (numpy.random.RandomState.seed docs)
        raise UsageError(f"--seed must be between 0 and {2**32 - 1}; got {seed}")
    if timeout is not None and not timeout > 0:
        raise UsageError(f"--timeout must be a positive number of seconds; got {timeout}")
    if project is not None and not Path(project).is_dir():
        raise UsageError(f"project directory not found: {project}")
    if dtype not in (None, "float32", "float64"):
        raise UsageError(f"--dtype must be float64 (the CPU reference) or float32; got {dtype!r}")
    if dtype == "float64" and device.startswith("mps"):
        from mpsready.record.mps import FLOAT64_REFUSAL

        raise UsageError(f"--dtype float64 cannot run on MPS: {FLOAT64_REFUSAL} Record the float64 reference "
                         "with --device cpu.")


def _prepare_output(out_p: Path, force: bool) -> Path:
    """The partial directory the worker writes into, beside ``out_p``; ``UsageError`` when ``out_p`` holds
    something other than a run record (or a record and no ``force``), or cannot be created."""
    if out_p.is_symlink() or (out_p.exists() and (not out_p.is_dir() or any(out_p.iterdir()))):
        if not force:
            raise UsageError(f"output {out_p} exists and is not empty (use --force to replace a run record)")
        why = not_a_run_record(out_p)
        if why:
            raise UsageError(f"--force only replaces a complete run record; {out_p} {why}: nothing replaced")
    try:  # checked before the step runs, so no work is lost; the old record stays until the new one is complete
        if out_p.parent.exists() and not out_p.parent.is_dir():
            raise NotADirectoryError(20, "Not a directory")
        from mpsready.output import missing_parent

        parent = missing_parent(out_p)
        if parent is not None:  # h40c: the rule of every -o: only the last level is created
            raise UsageError(f"cannot create run record {out_p}: the folder {parent} does not exist "
                             "(only the last level is created)")
        clean_leftovers(out_p)
        partial = Path(tempfile.mkdtemp(prefix=f".{out_p.name}.partial-{os.getpid()}-", dir=out_p.parent))
        (partial / TENSORS).write_text("", encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot create run record {out_p}: {exc.strerror or exc}") from None
    return partial


def not_a_run_record(path: Path) -> str | None:
    """Why ``--force`` must not replace ``path`` (``None``: it is a complete run record and may go): it is a
    folder, not a link, whose ``record.json`` is a valid manifest and which holds nothing a record does not
    hold (``record.json``, ``tensors.jsonl``, ``tensors/step-NNNN.safetensors``,
    ``layer_inputs/LAYER/step-NNNN.safetensors``, docs/run-record.md). A folder with a file named
    ``record.json`` and anything else (a project, a home folder) is never deleted."""
    import re

    from mpsready.record.numerics_hook import LAYER_DIR

    if path.is_symlink() or not path.is_dir():
        return "is not a folder"
    try:
        RunRecord.open(path)
    except RecordError as exc:
        return f"is not a run record ({exc})"
    step = re.compile(r"step-[0-9]{4,}\.safetensors")
    for dirpath, dirnames, filenames in os.walk(path):
        rel = Path(dirpath).relative_to(path)
        parts = rel.parts
        for name in dirnames:
            ok = (not parts and name in (RAW_DIR, LAYER_DIR)) or (parts == (LAYER_DIR,))
            if not ok or os.path.islink(os.path.join(dirpath, name)):
                return f"holds {(rel / name).as_posix()}, which is not part of a run record"
        for name in filenames:
            full = os.path.join(dirpath, name)
            ok = (not parts and name in (MANIFEST, TENSORS)) or \
                ((parts == (RAW_DIR,) or (len(parts) == 2 and parts[0] == LAYER_DIR)) and bool(step.fullmatch(name)))
            if not ok or os.path.islink(full) or not os.path.isfile(full):
                return f"holds {(rel / name).as_posix()}, which is not part of a run record"
    return None


def _how_it_died(timed_out: bool, timeout: float | None, rc: int) -> str:
    """Why a worker that never reported ``done`` ended, for the record's ``worker.how``."""
    if timed_out and timeout is not None:
        return (f"killed after the --timeout of {timeout:g} s" if timeout != DEFAULT_TIMEOUT else
                f"killed after the default timeout of {timeout:g} s (raise it with --timeout)")
    if rc < 0:
        return f"killed by {_signal_name(rc)}"
    return f"exited with status {rc} before finishing"


    return True


def clean_leftovers(out_p: Path) -> list[str]:
    """Folders a killed ``mpsready record`` of ``out_p`` left next to it, dealt with before a new one starts:
    ``.OUT.partial-PID-*`` (an unfinished record) removed and ``.OUT.old-PID-*`` (the previous record, renamed
    aside just before the new one took its place) put back as ``OUT`` when ``OUT`` is missing, else removed,
    when process PID is gone. One whose process still runs, or without a PID (an older mpsready), is left and
    named on stderr. Returns the notes printed."""
    notes: list[str] = []
    try:
        entries = sorted(out_p.parent.iterdir())
    except OSError:
        return notes
    for p in entries:
        for kind in ("partial", "old"):
            prefix = f".{out_p.name}.{kind}-"
            if p.name.startswith(prefix) and p.is_dir():
                break
        else:
            continue
        pid_text = p.name[len(prefix):].split("-", 1)[0]
        pid = int(pid_text) if pid_text.isdigit() and "-" in p.name[len(prefix):] else None
        if pid is None or (pid != os.getpid() and childproc.pid_alive(pid)):
            why = f"process {pid} still runs" if pid else "left by an older mpsready run; remove it by hand"
            notes.append(f"mpsready record: left in place: {p} ({why})")
            continue
        if kind == "old" and not out_p.exists() and (p / "record").is_dir():
            os.replace(p / "record", out_p)
            notes.append(f"mpsready record: {out_p} restored from {p.name} (a killed run had set it aside)")
        shutil.rmtree(p, ignore_errors=True)
    for note in notes:
        print(note, file=sys.stderr)
    return notes


def _move_into_place(partial: Path, out_p: Path) -> None:
    """Rename the finished record to ``out_p``. A previous record there is renamed aside first and removed only
    after the new one is in place: at every moment one complete record exists."""
    old = None
    if out_p.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out_p.name}.old-{os.getpid()}-", dir=out_p.parent))
        os.replace(out_p, old / "record")
    try:
        os.replace(partial, out_p)
    except BaseException:
        if old is not None:
            os.replace(old / "record", out_p)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _spawn(python: str, spec_path: Path, cwd: str, env: dict[str, str], stderr_path: Path,
           timeout: float | None, cleanup: list[str] | None = None) -> tuple[int, bool]:
    """Run the worker in a child process; ``(returncode, timed_out)`` (negative returncode: signal).

    :func:`mpsready.childproc.run_group`: the worker leads a new session (its own process group, holding every
    process the step starts), killed on the timeout, on SIGTERM/SIGINT/SIGHUP to this process (which then
    raises :class:`Interrupted`), after the worker exits, and when this process dies (the worker's pipe
    watchdog, :func:`mpsready.childproc.watch_parent`, which also removes ``cleanup``). The worker starts
    with nothing of the user's importable (:func:`mpsready.childproc.command`)."""
    with stderr_path.open("wb") as err:
        return childproc.run_group(childproc.command(python, "mpsready.record.worker", [str(spec_path)]),
                                   env=childproc.child_env(env, cleanup), cwd=cwd, stdout=err,
                                   stderr=subprocess.STDOUT, timeout=timeout)


Interrupted = childproc.Interrupted


def _manifest(events: list[dict[str, Any]], stages: list[dict[str, Any]], *, spec: str, device: str, steps: int,
              seed: int, dtype: str | None, save_tensors: bool, synthetic_inputs: str | None,
              worker: dict[str, Any]) -> dict[str, Any]:
    def last(name: str) -> dict[str, Any] | None:
        return next((e for e in reversed(events) if e.get("event") == name), None)

    env = (last("env") or {}).get("env")
    precision = (last("precision") or {}).get("precision") or (env or {}).get("precision") or {}
    seed_doc = (last("seed") or {}).get("seed") or {"value": seed, "how": "not reached (the worker died first)"}
    step_metrics = [e["metrics"] for e in events if e.get("event") == "step"]
    done = last("done") or {}
    inputs_ev = last("inputs")
    inputs = done.get("inputs") or ({"structure": inputs_ev["structure"], "tensors": inputs_ev["tensors"]}
                                    if inputs_ev else None)
    peaks = [m["peak_memory_bytes"] for m in step_metrics if m.get("peak_memory_bytes")]
    kind = device.split(":")[0]
    fb_var = str(((env or {}).get("env_vars") or {}).get("PYTORCH_ENABLE_MPS_FALLBACK") or "").strip()
    fallback = done.get("fallback") or {
        "enabled": fb_var not in ("", "0"),
        "checked": kind == "mps", "calls": {}, "by_stage": {}, "warned_ops": [],
        "note": "the step never ran (importing the entry failed)" if done
        else "the worker died before reporting fallback counts"}
    return envelope(
        SCHEMA_NAME, SCHEMA_VERSION, basis="observed", device=device, device_kind=kind,
        observed_on=_observed_on(device, env),
        mps_run=kind == "mps", entry=spec, steps=steps, dtype=dtype or "as the entry builds it",
        seed=seed_doc, precision=precision, env=env, stages=stages, step_metrics=step_metrics,
        memory={"source": (step_metrics[0].get("memory_source") if step_metrics else None),
                "peak_bytes": max(peaks) if peaks else None},
        fallback=fallback, inputs=inputs, synthetic_inputs=synthetic_inputs, raw_tensors=save_tensors,
        raw_dir=RAW_DIR if save_tensors else None, warnings=done.get("warnings", []),
        warning_counts=done.get("warning_counts", {}), worker=worker,
        # absent when the worker died before reporting them (unknown, not "none")
        **({"random_ops": done["random_ops"]} if isinstance(done.get("random_ops"), dict) else {}),
        **_numerics(done))


def _numerics(done: dict[str, Any]) -> dict[str, Any]:
    """``nan_check``, ``first_nonfinite`` and ``layer_inputs`` of the manifest (docs/run-record.md)."""
    num = done.get("numerics")
    if not isinstance(num, dict):
        return {}
    out: dict[str, Any] = {"nan_check": bool(num.get("nan_check")), "first_nonfinite": num.get("first_nonfinite")}
    if num.get("nan_check"):
        out["nan_check_detail"] = {k: num.get(k) for k in ("method", "nonfinite_seen", "rerun_steps", "checked", "note")
                                   if k in num}
    if done.get("layer_inputs"):
        out["layer_inputs"] = done["layer_inputs"]
    return out


def _finite(obj: Any) -> Any:
    """JSON has no NaN/Inf: a non-finite float becomes ``None``; a step's loss keeps its text in
    ``loss_nonfinite`` ("nan", "inf", "-inf")."""
    import math

    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        d = {k: _finite(v) for k, v in obj.items()}
        loss = obj.get("loss")
        if isinstance(loss, float) and not math.isfinite(loss):
            d["loss_nonfinite"] = str(loss)
        return d
    if isinstance(obj, list):
        return [_finite(x) for x in obj]
    return obj


def _observed_on(device: str, env: dict[str, Any] | None) -> str:
    env = env or {}
    kind = device.split(":")[0]
    if kind == "cuda":
        devs = ((env.get("torch") or {}).get("cuda") or {}).get("devices") or []
        idx = int(device.partition(":")[2] or 0)
        name = next((d["name"] for d in devs if d["index"] == idx), "CUDA device")
        return f"{device} ({name})"
    if kind == "mps":
        chip = (env.get("machine") or {}).get("chip") or "Apple GPU"
        return f"mps ({chip}, macOS {(env.get('os') or {}).get('macos_version')})"
    return f"cpu ({(env.get('machine') or {}).get('chip') or 'CPU'}); not an MPS run"
