"""pytest plugin: the project's own test suite on the emulated Mac of ``mpsready run`` (off unless asked).

PYTEST_DONT_REWRITE (mpsready run imports this module before pytest starts; it has no asserts to rewrite).

Registered through the ``pytest11`` entry point ``mpsready.pytest_plugin`` (or ``-p mpsready.pytest_plugin``).
Without ``--mps-emulate`` it only registers the ``mac``/``not_mac`` markers and the ``emulated_mac`` fixture
(which then skips its test); nothing is imported beyond pytest.

``pytest --mps-emulate[=TORCH[,MACOS]]`` installs one :class:`~mpsready.emulate.Emulator` for the whole session,
before the first conftest.py is imported (the same device model, judge and Mac identity ``mpsready run`` puts in
its child: MPS available, CUDA absent, ``sys.platform == "darwin"`` in the project's files, the CPU fallback per
``PYTORCH_ENABLE_MPS_FALLBACK`` as set when the project first imports torch, processes started by ``spawn``).
``TORCH`` defaults to the installed release, ``MACOS`` to 15.5; ``--mps-emulate=2.5,14.4``. A bare ``--mps-emulate``
followed by a word that does not start with a digit or a comma (``--mps-emulate tests/``) takes no value: the word
stays a test path.

Each test keeps its own outcome; the plugin adds its verdict on the emulated Mac (:mod:`.watch`). A test whose
exception the emulated Mac raised or marked is shown ``MAC-FAILED`` (``M``) instead of ``FAILED`` (it still counts
as failed), with an "emulated Mac" section naming kind, op, dtype and the project's file:line.

* ``@pytest.mark.mac``: the test must pass on the emulated Mac: a predicted Mac failure the test caught itself
  fails it too. ``@pytest.mark.not_mac(reason=...)``: skipped on the emulated Mac, with the reason.
* fixture ``emulated_mac`` (:class:`EmulatedMac`): the target, the test's failures and fallbacks so far,
  ``expect_failure(kind=, op=, dtype=)`` to assert a Mac failure (then not counted against the test).
* ``--mps-json FILE``: the ``mpsready.pytest`` document (:mod:`.document`), which ``mpsready report --tests FILE``
  takes as predicted evidence. ``--mps-fail-on mac-failure|fallback|never`` (default ``mac-failure``): pytest
  exits 1 when a test has a predicted Mac failure or wrong result (even one the test caught), or also CPU
  fallbacks, or never for the plugin's sake (the project's own failing tests fail the run as always).
  Whatever the level, the gate never passes a suite that did not run: a test module that failed to collect
  (an import error: a CUDA extension built at import fails on a Mac too) fails it, each error recorded in the
  document (``collection_errors``: module, message), and so does a session that collected no test at all,
  unless ``--mps-allow-empty`` is given (pytest's own exit status for an empty session, 5, stays).

With pytest-xdist (``-n N``) every worker installs its own emulated Mac and the controller merges their verdicts
into the one document and gate (:mod:`.distributed`).

``mpsready run -- pytest ARGS`` runs pytest in its child with this plugin attached to the child's emulator
(:func:`attach`).
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING, Any, cast

import pytest

from mpsready.run.attached import ATTACHED as _ATTACHED
from mpsready.run.attached import attach, attached_failures  # noqa: F401  # the plugin's public API, kept
from mpsready import versions
from mpsready.pytest_plugin.outcome import WORKER_KEY, collection_message, mac_teststatus, outcome_of, plain
from mpsready.pytest_plugin.render import write_summary

if TYPE_CHECKING:
    from mpsready.pytest_plugin.distributed import ControllerSession

FAIL_ON = ("mac-failure", "fallback", "never")
PLUGIN_NAME = "mpsready-emulated-mac"


def _remove(path: str) -> None:
    if os.path.exists(path):
        os.unlink(path)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mpsready", "mpsready: the test suite on an emulated Mac (predicted)")
    group.addoption("--mps-emulate", dest="mps_emulate", nargs="?", const="", default=None,
                    metavar="TORCH[,MACOS]",
                    help="run the tests on the emulated Mac of mpsready run (default: the installed torch release, "
                         "macOS 15.5); e.g. --mps-emulate=2.5,14.4")
    group.addoption("--mps-fail-on", dest="mps_fail_on", choices=FAIL_ON, default=None,
                    help="with --mps-emulate: exit 1 on a predicted Mac failure (default), also on CPU fallbacks, "
                         "or never because of the emulated Mac")
    group.addoption("--mps-allow-empty", dest="mps_allow_empty", action="store_true", default=False,
                    help="with --mps-emulate: let the gate pass a suite that collected no test (it fails by default: "
                         "a suite that did not run proves nothing)")
    group.addoption("--mps-json", dest="mps_json", default=None, metavar="FILE",
                    help="with --mps-emulate: write the mpsready.pytest document (for mpsready report --tests)")
    # the same settings in pytest.ini / pyproject's [tool.pytest.ini_options]; the command line wins
    parser.addini("mps_emulate", "run the tests on the emulated Mac: TORCH[,MACOS], or 'true' for the installed "
                  "release (as --mps-emulate)", default="")
    parser.addini("mps_json", "write the mpsready.pytest document to this file (as --mps-json)", default="")
    parser.addini("mps_fail_on", "mac-failure (default), fallback or never (as --mps-fail-on)", default="")
    parser.addini("mps_allow_empty", "let the gate pass a suite that collected no test (as --mps-allow-empty)",
                  type="bool", default=False)


_TRUE = ("true", "yes", "on", "1")


def _apply_ini(config: pytest.Config, ns) -> None:
    """Fill the options the command line left unset from the ini file (``mps_emulate``, ``mps_json``,
    ``mps_fail_on``, ``mps_allow_empty``), in ``ns`` (``config.option`` or the early parse's namespace).
    Raises ``pytest.UsageError`` for an ini value the option would refuse."""
    if getattr(ns, "mps_emulate", None) is None:
        value = str(config.getini("mps_emulate") or "").strip()
        if value and value.lower() not in ("false", "no", "off", "0"):
            ns.mps_emulate = "" if value.lower() in _TRUE else value
    if not getattr(ns, "mps_json", None):
        ns.mps_json = str(config.getini("mps_json") or "").strip() or None
    if getattr(ns, "mps_fail_on", None) is None:
        value = str(config.getini("mps_fail_on") or "").strip() or FAIL_ON[0]
        if value not in FAIL_ON:
            raise pytest.UsageError(f"ini mps_fail_on = {value!r}: give one of {', '.join(FAIL_ON)}")
        ns.mps_fail_on = value
    if not getattr(ns, "mps_allow_empty", False):
        ns.mps_allow_empty = bool(config.getini("mps_allow_empty"))


def _parse_target(value: str) -> tuple[str, str]:
    """``--mps-emulate`` value -> (torch release, macOS); raises ``pytest.UsageError``."""
    from mpsready.errors import UsageError
    from mpsready.run.cli import target_torch
    from mpsready.trace.predict import DEFAULT_MACOS

    torch_v, _, macos = value.partition(",")
    hint = f"--mps-emulate takes TORCH[,MACOS], e.g. --mps-emulate=2.5,14.4 (got {value!r})"
    try:
        torch_v = target_torch(torch_v.strip() or None)
    except UsageError as exc:
        raise pytest.UsageError(f"{exc}; {hint}") from None
    macos = macos.strip() or DEFAULT_MACOS
    try:
        versions.release(macos)
    except ValueError:
        raise pytest.UsageError(f"--mps-emulate: {macos!r} is not a macOS version such as 14.4") from None
    return torch_v, macos


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser, args) -> None:
    """Install the emulated Mac before the first conftest.py is imported (so it sees the Mac too)."""
    ns = early_config.known_args_namespace
    _apply_ini(early_config, ns)
    value = "" if _bare_flag(args) else getattr(ns, "mps_emulate", None)
    if _ATTACHED.get("emu") is not None:
        _check_json_path(ns)
        session: MacSession | ControllerSession = MacSession(early_config, _ATTACHED["emu"], _ATTACHED["torch"],
                                                             installed=False)
    elif value is None:
        return
    else:
        _check_host()
        torch_v, macos = _parse_target(value)
        _check_json_path(ns)
        role = xdist_role(ns)
        if role == "controller":
            from mpsready.pytest_plugin.distributed import ControllerSession

            session = ControllerSession(early_config, torch_v, macos)
        else:
            session = MacSession.install(early_config, torch_v, macos, worker=role == "worker")
    early_config.pluginmanager.register(session, PLUGIN_NAME)
    session.start_document()


def _check_host() -> None:
    """``--mps-emulate`` needs pytest >= 7.0 and PyTorch in this environment: ``pytest.UsageError`` naming what
    is missing, before anything is installed (never a traceback from the middle of the emulator)."""
    import importlib.util

    found = tuple(int(p) for p in pytest.__version__.split(".")[:2] if p.isdigit())
    if found < PYTEST_FLOOR:
        raise pytest.UsageError(f"--mps-emulate needs pytest >= {'.'.join(map(str, PYTEST_FLOOR))} "
                                f"(this is pytest {pytest.__version__}): pip install 'mpsready[pytest]'")
    if importlib.util.find_spec("torch") is None:
        raise pytest.UsageError("--mps-emulate needs PyTorch in this environment (the emulated Mac runs your tests "
                                "with it): pip install 'mpsready[torch]'")


def _check_json_path(ns) -> None:
    """``--mps-json`` naming a folder (or in a folder that does not exist) is a usage error before any test
    runs, not a traceback after all of them."""
    path = getattr(ns, "mps_json", None)
    if not path:
        return
    from mpsready.output import check_output_path

    try:
        check_output_path(path)
    except OSError as exc:
        raise pytest.UsageError(f"--mps-json {path}: cannot write: {exc.strerror}") from None


def xdist_role(ns) -> str | None:
    """``"controller"`` in the pytest process that hands tests to pytest-xdist workers (``-n N``, ``-n auto``,
    ``--dist``/``--tx``), ``"worker"`` in one of those workers, ``None`` in a plain session. A worker is
    started with the controller's arguments and ``PYTEST_XDIST_WORKER`` in its environment (pytest-xdist 3.x,
    ``xdist/remote.py``); both are needed, since a pytest started *by a test* inherits the variable."""
    n = getattr(ns, "numprocesses", None)
    distributed = n not in (None, 0, "0") or (getattr(ns, "tx", None) and getattr(ns, "dist", "no") != "no")
    if not distributed:
        return None
    return "worker" if os.environ.get("PYTEST_XDIST_WORKER") else "controller"


def _bare_flag(args: list[str]) -> bool:
    """``--mps-emulate WORD`` where WORD is no release (``tests/``): make it ``--mps-emulate= WORD`` in ``args``
    (the list pytest parses next), so WORD stays a test path. True when it did."""
    for i, word in enumerate(args[:-1]):
        if word == "--":
            return False
        nxt = args[i + 1]
        if word == "--mps-emulate" and not (nxt[:1].isdigit() or nxt.startswith(",")):
            args[i] = "--mps-emulate="
            return True
    return False


def register_markers(config: pytest.Config) -> None:
    """Declare mpsready's markers, so a suite that uses them collects under ``--strict-markers``. Also called by
    the kit's observing plugin: on a Mac the kit puts mpsready on ``PYTHONPATH`` without installing it, so this
    plugin's entry point is not loaded there."""
    config.addinivalue_line("markers", "mps_mac: must pass on the emulated Mac (pytest --mps-emulate); a predicted "
                                       "Mac failure the test catches fails it too")
    config.addinivalue_line("markers", "mps_not_mac(reason=None): skipped on the emulated Mac (pytest --mps-emulate)")
    # the first names, kept so suites that use them still collect under --strict-markers (deprecated: a generic
    # `mac` marker can collide with a project's own)
    config.addinivalue_line("markers", "mac: deprecated alias of mps_mac")
    config.addinivalue_line("markers", "not_mac(reason=None): deprecated alias of mps_not_mac")


def pytest_configure(config: pytest.Config) -> None:
    _apply_ini(config, config.option)
    register_markers(config)


# marker name -> its deprecated alias
MARKERS = {"mps_mac": "mac", "mps_not_mac": "not_mac"}


def marker(item: pytest.Item, name: str):
    """``item``'s closest ``name`` marker (``mps_mac``/``mps_not_mac``), or its deprecated alias (``mac``/
    ``not_mac``) with a deprecation warning on the item; ``None`` without either."""
    found = item.get_closest_marker(name)
    if found is not None:
        return found
    old = item.get_closest_marker(MARKERS[name])
    if old is not None and not getattr(item, "_mpsready_warned_" + name, False):
        setattr(item, "_mpsready_warned_" + name, True)
        item.warn(pytest.PytestDeprecationWarning(
            f"@pytest.mark.{MARKERS[name]} is deprecated: use @pytest.mark.{name} (mpsready's markers are "
            "namespaced so they cannot collide with a project's own)"))
    return old


def marker_names(item: pytest.Item) -> list[str]:
    """The mpsready markers on ``item`` under their current names (an alias counts as its new name)."""
    return [name for name, old in MARKERS.items()
            if item.get_closest_marker(name) is not None or item.get_closest_marker(old) is not None]


def _session(config: pytest.Config) -> MacSession | None:
    return config.pluginmanager.get_plugin(PLUGIN_NAME)


class EmulatedMac:
    """The ``emulated_mac`` fixture: the emulated Mac as one test sees it.

    ``target``: ``{"torch", "macos", "fallback"}``; ``failures`` / ``fallbacks``: this test's so far (entries of
    the ``mpsready.pytest`` document); ``mps_used``: a tensor reached MPS during the test."""

    def __init__(self, session: MacSession, watch):
        self._session = session
        self._watch = watch

    @property
    def target(self) -> dict[str, Any]:
        emu = self._session.emu
        return {"torch": emu.judge.torch, "macos": emu.target.macos, "fallback": emu.judge.fallback}

    @property
    def failures(self) -> list[dict[str, Any]]:
        return self._watch.failures()

    @property
    def fallbacks(self) -> list[dict[str, Any]]:
        return self._watch.fallbacks()

    @property
    def mps_used(self) -> bool:
        return self._watch.mps_used()

    def mac_failure(self, exc: BaseException) -> dict[str, Any] | None:
        """The predicted Mac failure entry ``exc`` stands for, or ``None`` (an exception of the test's own)."""
        from mpsready.pytest_plugin.watch import mac_entry

        return mac_entry(self._session.emu, exc, self._session.root)

    @contextlib.contextmanager
    def expect_failure(self, kind: str | None = None, op: str | None = None, dtype: str | None = None):
        """Assert that the block raises a predicted Mac failure (of ``kind``, ``op``, ``dtype`` where given):
        yields an object whose ``failure`` is the entry once the block ended. The failure is declared, so it
        does not count against the test; ``pytest.fail`` when none is raised or it does not match; any other
        exception propagates."""
        caught = _Caught()
        try:
            yield caught
        except BaseException as exc:
            entry = self.mac_failure(exc)
            if entry is None:
                raise
            got = {"kind": entry["kind"], "op": entry["op"], "dtype": entry["dtype"]}
            want = {k: v for k, v in (("kind", kind), ("op", op), ("dtype", dtype)) if v is not None}
            if any(got[k] != v for k, v in want.items()):
                pytest.fail(f"expected a Mac failure {want}, the emulated Mac raised {got}: {entry['message']}")
            caught.failure = entry
            self._watch.expected.append(entry)
        else:
            pytest.fail("expected a predicted Mac failure"
                        + (f" ({', '.join(f'{k}={v}' for k, v in (('kind', kind), ('op', op), ('dtype', dtype)) if v)})"
                           if kind or op or dtype else "") + ", the emulated Mac raised none")


class _Caught:
    failure: dict[str, Any] | None = None


@pytest.fixture
def emulated_mac(request: pytest.FixtureRequest) -> EmulatedMac:
    """The emulated Mac of this test (:class:`EmulatedMac`); skips the test without ``--mps-emulate``."""
    session = _session(request.config)
    if session is None:
        pytest.skip("emulated_mac needs pytest --mps-emulate")
    return EmulatedMac(session, session.watch_of(request.node))


# pytest >= 7.0 (item.stash, pytest.StashKey): the floor of the `pytest` extra. An older pytest imports this
# module too (the pytest11 entry point is loaded by every pytest of the environment), so nothing here may need
# 7.0 at import: the plugin stays inert there and --mps-emulate is a usage error that names the floor.
PYTEST_FLOOR = (7, 0)
_WATCH = cast("pytest.StashKey[Any]", pytest.StashKey[Any]() if hasattr(pytest, "StashKey") else None)


class MacSession:
    """The plugin while the session is emulated: per-test watches, the document, the summary and the gate."""

    def __init__(self, config: pytest.Config, emu, torch_requested: str, installed: bool, undo=(),
                 worker: bool = False):
        self.config = config
        self.worker = worker  # a pytest-xdist worker: its tests go to the controller, which writes the document
        self.emu = emu
        self.torch_requested = torch_requested
        self.installed = installed
        self.undo = list(undo)
        self.root = str(config.rootpath) if getattr(config, "rootpath", None) else os.getcwd()
        self.tests: list[dict[str, Any]] = []
        self.collection_errors: list[dict[str, Any]] = []
        self.reports: dict[str, list] = {}
        self.doc: dict[str, Any] | None = None
        self._current: pytest.Item | None = None

    @classmethod
    def install(cls, config: pytest.Config, torch_v: str, macos: str, worker: bool = False) -> MacSession:
        import multiprocessing
        import tempfile

        from mpsready.emulate import Emulator, Target
        from mpsready.run import spawned
        from mpsready.run.child import watch_fallback_variable

        root = str(config.rootpath)
        fallback = os.environ.get("PYTORCH_ENABLE_MPS_FALLBACK") == "1"
        emu = Emulator(Target(torch_v, macos, fallback), root)
        undo = []
        method = multiprocessing.get_start_method(allow_none=True)
        multiprocessing.set_start_method("spawn", force=True)  # macOS starts processes by spawn
        undo.append(lambda: multiprocessing.set_start_method(method, force=True))
        report = os.path.join(tempfile.gettempdir(), f"mpsready-pytest-spawn-{os.getpid()}.jsonl")
        undo.append(spawned.patch_command_line(root, {"torch": torch_v, "macos": macos, "fallback": fallback},
                                               report))
        undo.append(lambda: _remove(report))
        emu.install()
        undo.append(emu.uninstall)
        undo.append(watch_fallback_variable(emu))  # the project's first `import torch` reads the variable
        return cls(config, emu, torch_v, installed=True, undo=undo, worker=worker)

    def _options(self):
        """pytest's options: ``config.option`` once parsed, before that (the conftests are loading) the early
        parse's ``known_args_namespace``."""
        opt = self.config.option
        return opt if getattr(opt, "mps_json", None) else self.config.known_args_namespace

    def start_document(self) -> None:
        """With ``--mps-json``: the document written at once (its gate failed until the session finishes, so a
        process that dies from here on leaves a failed gate), and again by ``os._exit`` (a test ending the
        process after a predicted Mac failure: the document says what the emulated Mac had seen)."""
        if not self._options().mps_json or self.worker:
            return
        self._write_document(finished=False)
        real_exit = os._exit

        def _exit(code: int) -> None:
            try:
                self._write_document(finished=False, ended=f"os._exit({code})")
            finally:
                real_exit(code)

        os._exit = _exit  # type: ignore[assignment]  # undone with the session
        self.undo.append(lambda: setattr(os, "_exit", real_exit))

    def _write_document(self, *, finished: bool, ended: str | None = None) -> dict[str, Any]:
        """Build the document from the tests so far and write it to ``--mps-json`` (through a fresh temporary
        file, :func:`mpsready.output.write_text`). Until the session finishes, the document says so
        (``session_finished`` false) and its gate has failed: pytest's end of session never ran, so nothing
        the gate would read can be vouched for; ``ended``: how the process ended (the running test's results so
        far are included)."""
        import json

        from mpsready.output import write_text
        from mpsready.pytest_plugin.document import build_document, target_of

        opt = self._options()
        tests = list(self.tests)
        current = self._current
        if not finished and current is not None and current.stash.get(_WATCH, None) is not None:
            tests.append({"nodeid": current.nodeid,
                          "markers": marker_names(current),
                          **current.stash[_WATCH].result("error")})
        doc = build_document(target_of(self.emu, self.torch_requested), tests, opt.mps_fail_on,
                             list(self.config.invocation_params.args), self.root,
                             collection_errors=self.collection_errors,
                             allow_empty=bool(getattr(opt, "mps_allow_empty", False)))
        doc["session_finished"] = finished
        if not finished:
            why = f"the test process ended ({ended}) before the session finished" if ended else \
                "the session has not finished (a document left like this: the process died)"
            doc["gate"] = dict(doc["gate"], failed=True,
                               reason="; ".join(filter(None, [doc["gate"].get("reason"), why])))
        if opt.mps_json and not self.worker:
            write_text(opt.mps_json, json.dumps(doc, indent=1, default=str))
        return doc

    # ------------------------------------------------------------------ hooks
    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        for undo in reversed(self.undo):
            undo()
        self.undo = []

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            m = marker(item, "mps_not_mac")
            if m is not None:
                why = m.kwargs.get("reason") or (m.args[0] if m.args else None)
                item.add_marker(pytest.mark.skip(reason="not_mac: " + (why or "marked not_mac, not run on the "
                                                                              "emulated Mac")))

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        """A module (or package, conftest) that failed to collect: its tests never ran (the gate fails)."""
        if report.failed:
            self.collection_errors.append({"module": report.nodeid or str(report.fspath),
                                           "message": collection_message(report.longreprtext)})

    def watch_of(self, item: pytest.Item):
        return item.stash[_WATCH]

    # old-style wrappers (hookwrapper=True): pluggy's new-style `wrapper=True` raises TypeError at import with
    # pluggy < 1.1, which would break every pytest run of an environment that merely has mpsready installed
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem):
        from mpsready.pytest_plugin.watch import TestWatch

        item.stash[_WATCH] = TestWatch(self.emu, self.root)
        self.reports[item.nodeid] = []
        self._current = item
        try:
            yield
        finally:
            self._current = None
            self._finish(item)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        watch = item.stash.get(_WATCH, None)
        real_filter = getattr(item, "_traceback_filter", None)
        if watch is not None and call.excinfo is not None and real_filter is not None \
                and not isinstance(call.excinfo.value, _OUTCOMES) and _is_mac(watch, call.excinfo.value):
            # the emulator stands in for PyTorch's C++ here: on a Mac the error comes out of the torch call itself
            # (pytest's own filter re-walks the raw traceback, so the emulator's frames go after it)
            item._traceback_filter = lambda excinfo: real_filter(excinfo).filter(_not_emulator)  # type: ignore[method-assign]  # per item, on purpose
        try:
            outcome = yield
        finally:
            if "_traceback_filter" in getattr(item, "__dict__", {}):
                del item._traceback_filter
        rep = outcome.get_result()  # changed in place below: the report pytest keeps
        if watch is None:
            return
        if call.excinfo is not None and rep.failed:
            entry = watch.note_exception(call.excinfo.value)
            if entry is not None:
                rep.mpsready_mac = plain(entry)  # travels with the report to an xdist controller
                rep.sections.append(("emulated Mac", _entry_text(entry)))
                if _ATTACHED:
                    _ATTACHED["entries"].append(entry)
        elif rep.when == "call" and rep.passed and marker(item, "mps_mac") is not None:
            caught = watch.failures()
            if caught:
                watch.failed_by_mac = True
                rep.outcome = "failed"
                rep.mpsready_mac = plain(caught[0])
                rep.longrepr = ("marked mps_mac (must pass on the emulated Mac), but the emulated Mac raised a "
                                "failure the test caught:\n" + "\n".join(_entry_text(f) for f in caught))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.nodeid in self.reports:
            self.reports[report.nodeid].append(report)

    @pytest.hookimpl(tryfirst=True)
    def pytest_report_teststatus(self, report, config):
        return mac_teststatus(report)

    def _finish(self, item: pytest.Item) -> None:
        watch = item.stash.get(_WATCH, None)
        if watch is None:
            return
        entry = {"nodeid": item.nodeid,
                 "markers": marker_names(item),
                 **watch.result(outcome_of(self.reports.pop(item.nodeid, [])))}
        self.tests.append(entry)
        del item.stash[_WATCH]

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus) -> None:
        output = getattr(self.config, "workeroutput", None)
        if self.worker and output is not None:
            # pytest-xdist sends `workeroutput` to the controller when this hook returns (xdist/remote.py)
            import json

            from mpsready.pytest_plugin.document import target_of

            output[WORKER_KEY] = json.dumps({"target": target_of(self.emu, self.torch_requested),
                                             "tests": self.tests}, default=str)
            return
        self.doc = self._write_document(finished=True)
        if self.doc["gate"]["failed"] and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter, exitstatus, config) -> None:
        write_summary(self.doc, terminalreporter, config)


_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# pytest's own outcomes (pytest.skip, pytest.xfail, pytest.fail, pytest.exit and the skip markers raise them): never
# a Mac failure, and classifying one walks its traceback twice (mac_fact_origin), which 410 skipped tests of a
# real suite paid for nothing (issue 39)
_OUTCOMES = (pytest.skip.Exception, pytest.fail.Exception, pytest.exit.Exception)


def _not_emulator(entry) -> bool:
    return not str(entry.path).startswith(_PKG)


def _is_mac(watch, exc: BaseException) -> bool:
    from mpsready.pytest_plugin.watch import mac_entry

    return mac_entry(watch.emu, exc, watch.root) is not None


def _entry_text(f: dict[str, Any]) -> str:
    loc = f.get("location")
    where = f"{loc['path']}:{loc['line']}" if loc else "(no line in the project's files)"
    bits = [f"kind {f.get('kind')}"] + ([f"op {f['op']}"] if f.get("op") else []) + \
        ([f"dtype {f['dtype']}"] if f.get("dtype") else [])
    fixed = f"; predicted fixed in torch {f['fixed_in']}" if f.get("fixed_in") else ""
    return (f"predicted Mac failure at {where}: {', '.join(bits)}{fixed}\n"
            f"  {f.get('exception') or 'error'}: {str(f.get('message') or '')[:400]}")
