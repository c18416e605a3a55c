"""The environment record (``mpsready env``): what this machine and Python environment are.

``collect_env(project=None) -> dict`` measures it (schema ``mpsready.env`` v1, basis
``observed``); ``diff_env(a, b)`` compares two records. Imports nothing heavy.
"""

from mpsready.env.collect import SCHEMA_NAME, SCHEMA_VERSION, collect_env
from mpsready.env.diff import Difference, diff_env, load_env_record

__all__ = ["collect_env", "diff_env", "load_env_record", "Difference", "SCHEMA_NAME", "SCHEMA_VERSION"]
