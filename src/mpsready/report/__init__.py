"""The decision report: the acceptance checklist, the verdict and the time outlook.

Judgement lives in :mod:`~mpsready.report.checklist`, :mod:`~mpsready.report.verdict` and
:mod:`~mpsready.report.outlook`; the stage outputs are read by the adapters in
:mod:`~mpsready.report.evidence`; renderers live in :mod:`~mpsready.report.formats`.
:func:`~mpsready.report.build.build_report` ties them together.
"""
