"""Cost of serving torch.__version__ by the reading frame (emulate/release_api.py ``_version_answers``): aten calls
on emulated MPS with and without the substitution, interleaved, and the cost of a library's read of it.
Run: ``.venv/bin/python benchmarks/version_bench.py`` (about 10 s)."""
import os
import statistics
import tempfile
import time

import torch

from mpsready.emulate import release_api
from mpsready.emulate.session import Emulator, Target

real = release_api._version_answers
ROOT = tempfile.mkdtemp()


def once(with_version, n=20000):
    release_api._version_answers = real if with_version else (lambda emu: {})
    emu = Emulator(Target("2.5", "15.5"), ROOT)
    emu.install()
    try:
        x = torch.ones(8, device="mps")
        for _ in range(500):
            x + 1
        t = time.perf_counter()
        for _ in range(n):
            x + 1
        d = (time.perf_counter() - t) / n * 1e6
        t = time.perf_counter()
        for _ in range(100000):
            _ = torch.__version__  # read from this file: a library's read (not the program's)
        lib = (time.perf_counter() - t) / 100000 * 1e9
    finally:
        emu.uninstall()
    return d, lib


def main():
    res = {True: [], False: []}
    for _ in range(6):
        for w in (False, True):
            res[w].append(once(w))
    for w in (False, True):
        print("version substituted" if w else "not substituted   ",
              "aten add us/call median %.2f (runs %s)" % (statistics.median(r[0] for r in res[w]),
                                                          [round(r[0], 2) for r in res[w]]),
              "library read of torch.__version__ ns median %.0f" % statistics.median(r[1] for r in res[w]))
    os.rmdir(ROOT)


if __name__ == "__main__":
    main()
