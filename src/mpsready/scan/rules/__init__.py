"""Rules of the ``scan`` stage, one module per family; importing this package registers them all.

Families: :mod:`.deps` (DEP1xx), :mod:`.extensions` (EXT1xx), :mod:`.api` (API1xx),
:mod:`.dtypes` (DTY1xx), :mod:`.inputs` (INP1xx). The detection logic lives in
:mod:`mpsready.scan.code` (Python syntax trees) and :mod:`mpsready.scan.sources`
(declaration files); rule modules only document and register.
"""

from mpsready.scan.rules import api, deps, dtypes, extensions, inputs  # noqa: F401  (registers)

SCAN_PREFIXES = ("DEP", "EXT", "API", "DTY", "INP")
