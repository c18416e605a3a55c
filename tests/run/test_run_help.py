"""``mpsready run --help`` states run's own exit codes (h6: an exit 4, ``unverified``, was explained nowhere: the
top-level help lists 0-3)."""

from mpsready.cli import main
from mpsready.run.document import EXIT_CLEAN, EXIT_FAILED, EXIT_INCONCLUSIVE, EXIT_NO_RESULT, EXIT_UNVERIFIED


def test_run_help_lists_every_exit_code(capsys):
    assert main(["run", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    tail = text[text.index("exit codes:"):]
    assert tail == (
        "exit codes: 0 no predicted failure; 1 a predicted Mac failure or wrong result; 2 usage or input error, or "
        "an inconclusive run (the program or this environment stopped it before the Mac could be judged); 3 no "
        "result (the run ended without one, or an internal error); 4 unverified (nothing predicted to fail, but a "
        "call judged on no data or a compiled region not vouched for: not a pass); 128+N stopped by signal N. With several --torch releases the worst release "
        "decides, in the order 1, 3, 2, 4.")
    # the numbers the text names are the ones the run returns
    assert (EXIT_CLEAN, EXIT_FAILED, EXIT_INCONCLUSIVE, EXIT_NO_RESULT, EXIT_UNVERIFIED) == (0, 1, 2, 3, 4)
