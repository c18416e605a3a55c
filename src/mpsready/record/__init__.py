"""Run records: what a representative step did on one device (``mpsready record``).

The on-disk format lives in :mod:`mpsready.record.layout`, which reads without PyTorch,
so ``compare`` and ``report`` work on any machine.
"""
