"""Session-wide test set-up.

PyYAML is imported before any test: pytester (tests/pytest_plugin, tests/kit) restores ``sys.modules`` after each
of its tests, dropping every module first imported during it. When that is ``yaml``, the next ``import yaml`` is
a fresh package while libyaml's C extension (``yaml._yaml``, which cannot be unloaded) keeps the first one's node
classes, so ``CSafeLoader`` resolves no tag at all ("could not determine a constructor for the tag None"): every
later scan in the session failed as an internal error where PyYAML has libyaml (seen on Python 3.10 and 3.13;
the 3.11 wheel here has no libyaml). Importing it once here puts it in every snapshot.
"""

import yaml  # noqa: F401
import yaml.constructor  # noqa: F401
