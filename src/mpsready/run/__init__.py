"""``mpsready run``: your unmodified program on an emulated Mac (device model: :mod:`mpsready.emulate`)."""
