"""``mpsready learn ARCHIVE``: what a real Mac observed, where the shipped data predicted otherwise, kept as local
facts (:mod:`mpsready.ops.learned`) that later judgements on this machine use (:mod:`.cli`)."""
