"""The migrate stage: a reviewable, automatic port of a CUDA project to device-agnostic, Mac-ready code.

``mpsready migrate PATH`` scans the project, turns the findings of auto-fixable rules into edits with
libcst (formatting and comments survive) and prints a unified diff; ``--apply`` writes it. Layout:
:mod:`.interface` (the Transform interface), :mod:`.transforms` (one module per rule code),
:mod:`.specs` (what each transform fixes, declared beside it without libcst), :mod:`.fixability` (those
declarations put together: read by scan and report through ``mpsready.rules.fixability``), :mod:`.engine` (the
plan), :mod:`.planfile` (one file's plan, in a process pool for many), :mod:`.index` (positions and parents
in one pass), :mod:`.splice` (the new text from the index's tokens), :mod:`.stored` (the plan shown, reused by
``--apply``), :mod:`.apply` (atomic writes), :mod:`.formats` (diff and JSON). Hostile input:
:mod:`.guard` (nesting estimate, guarded parse), :mod:`.nbsplice` (notebooks written back cell source by
cell source), :mod:`.leftovers` (temp files of a killed ``--apply``), :mod:`.progress` (the stderr bar).

This package's ``__init__`` imports nothing, so :mod:`.fixability` loads without libcst.
"""
