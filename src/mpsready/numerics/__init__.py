"""Numerics triage: where the first NaN/Inf appeared, whether a divergence is an op's, and shapes that change.

* :mod:`mpsready.numerics.watch`: :class:`~mpsready.numerics.watch.OpWatch`, fed every aten call of a
  step by ``record`` (its observing dispatch mode), ``run`` (the emulated device's dispatch mode) and
  ``trace`` (the recorder's mode). It keeps the first call whose floating result held NaN/Inf while its
  floating inputs were finite (op, dtype, stage, step, the user's file:line, input statistics; never
  values) and counts the distinct input shapes per op and user line over the steps.
* :mod:`mpsready.numerics.rules`: NUM301-NUM304 and PRF301.

The stages feed this package and it imports none of them: ``record`` keeps its hook
(:mod:`mpsready.record.numerics_hook`) and ``mpsready replay`` is a package of its own (:mod:`mpsready.replay`).
"""
