"""The static audit stage: ``mpsready scan PATH`` and its library call :func:`scan_path`.

Layout (pip-audit style): ``sources/`` (one module per declaration file kind), ``code/`` (Python
syntax-tree analysis), ``rules/`` (documented rules, registered into :mod:`mpsready.rules`),
``formats/`` (terminal, json, sarif, md renderers), ``data/`` (knowledge base), ``engine.py``
(the scan), ``outlook.py`` (the static verdict), ``cli.py``. Importing this package is cheap and
never imports torch.
"""

from mpsready.scan.config import ScanConfig
from mpsready.scan.engine import ScanResult, scan_path

__all__ = ["ScanConfig", "ScanResult", "scan_path"]
