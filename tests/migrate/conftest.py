"""Every migrate test keeps the plans ``migrate PATH`` stores in a folder of its own, never in the user's cache."""

import pytest


@pytest.fixture(autouse=True)
def _own_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("MPSREADY_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
