"""mpsready: can this CUDA PyTorch project move to a Mac (MPS)? Evidence-backed answers.

Pipeline (one package per stage): ``scan`` -> ``env`` -> ``ops`` -> ``trace`` ->
``record`` -> ``compare`` -> ``report``. All stages share :mod:`mpsready.findings`.
"""

__version__ = "0.1.0"
