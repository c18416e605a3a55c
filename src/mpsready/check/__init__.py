"""``mpsready check`` and ``mpsready demo``: run every stage this machine allows, then write the report.

:mod:`.pipeline` (:class:`~.pipeline.CheckPipeline`) runs the stages in order and writes each one's own JSON
(or run record) into the output folder; :mod:`.cli` turns those into the report with
:func:`mpsready.report.build.build_report`; :mod:`.demo` runs it on the bundled example project. This is the
one package that imports the stage engines (scan, env, trace, record, compare); :mod:`mpsready.report` reads
their outputs only. Importing this package imports nothing.
"""
