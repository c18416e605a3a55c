import os
import sys

# `python -m mpsready` puts the current folder first on sys.path (Python's rule for -m, "sys.path module search
# path"); run from inside a project, its yaml.py or packaging/ would be imported, and run, in place of the library.
# mpsready never imports the project's modules through the path (ENTRY adds its own folder, the program's children
# start with their own path), so drop it, as Python 3.11's -P does; the console script never had it.
if not getattr(sys.flags, "safe_path", False) and sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

from mpsready.cli import main  # noqa: E402

raise SystemExit(main())
