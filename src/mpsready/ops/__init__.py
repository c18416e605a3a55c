"""MPS operator-support data per PyTorch release, and queries over it (``mpsready ops``).

Public API: :mod:`mpsready.ops.api` (``load_db``, ``shipped_versions``, ``OpSupport``, ``DtypeRule``, ``SupportDB``).
The tables are built by maintainers with ``python -m mpsready.ops.build`` and shipped in ``ops/data/tables``.
"""
