"""Run records made on the CPU with tiny real models (see recorder.py), shared by the tests."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.compare.recorder import mlp, record_run  # noqa: E402


@pytest.fixture(scope="session")
def recs(tmp_path_factory):
    d = tmp_path_factory.mktemp("records")
    out = {
        "a": record_run(d / "a", steps=3),
        "a_rerun": record_run(d / "a_rerun", steps=3),
        "ref64": record_run(d / "ref64", steps=3, dtype=torch.float64),
        "perturbed": record_run(d / "perturbed", steps=3, perturb=lambda m: m.fc2.weight.add_(1e-3)),
        "stats_only": record_run(d / "stats_only", steps=3, save_tensors=False),
        "stats_perturbed": record_run(d / "stats_perturbed", steps=3, save_tensors=False,
                                      perturb=lambda m: m.fc2.weight.add_(1e-3)),
        "ref64_stats": record_run(d / "ref64_stats", steps=3, dtype=torch.float64, save_tensors=False),
        "drop_a": record_run(d / "drop_a", steps=2, model_fn=lambda: mlp(dropout=0.5), rng_seed=1),
        "drop_b": record_run(d / "drop_b", steps=2, model_fn=lambda: mlp(dropout=0.5), rng_seed=2),
        "extra": record_run(d / "extra", steps=3, model_fn=lambda: mlp(extra=True)),
    }
    return out
