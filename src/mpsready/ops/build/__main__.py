"""``python -m mpsready.ops.build``: see :mod:`mpsready.ops.build.builder`."""

from mpsready.ops.build.builder import main

raise SystemExit(main())
