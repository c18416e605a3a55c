"""An entry module whose import fails (a missing dependency), as pytorch/examples mnist does without torchvision."""
import mpsready_no_such_dependency  # noqa: F401


def step():
    raise AssertionError("never reached")
