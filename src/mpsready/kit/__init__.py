"""A kit for a session on a borrowed or rented Mac (``mpsready kit``), and its way back (``report --mac-results``,
``mpsready learn``).

One module per stage: :mod:`.select` (which files of the project may leave the lab, and why the others may
not), :mod:`.manifest` (what leaves, with sizes and sha256; the sign-off), :mod:`.script` (``run-on-mac.sh``),
:mod:`.build` (the folder and its archive), :mod:`.bounded` and :mod:`.finish` (run on the Mac by the script,
standard library only), :mod:`.observe` (the pytest plugin that observes the project's tests on the real
device), :mod:`.archive` (reading a results archive safely), :mod:`.learn` (observed disagreements kept as
local facts). Importing this package imports nothing else: the script runs :mod:`.bounded` with a bare Python.
"""
