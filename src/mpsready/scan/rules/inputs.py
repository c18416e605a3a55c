"""INP1xx: input the scan could not read. A bad file is a finding, never a crash."""

from mpsready.scan.rules._define import rule

SRC = "mpsready scan (about its own input)"

UNREADABLE = rule(
    "INP101", "unreadable-file", "info",
    "A file could not be opened or was deliberately not read (permissions, vanished during the scan, a named "
    "pipe or device, a symbolic link leading out of the project).",
    "Its contents were not checked, so CUDA ties in it may be missed.",
    "chmod 000 train.py",
    "Fix the permissions and scan again.",
    SRC,
)
NOT_TEXT = rule(
    "INP102", "not-text", "info",
    "A file that should be text is binary or not UTF-8.",
    "Its contents were not checked.",
    "requirements.txt saved as UTF-16",
    "Save the file as UTF-8.",
    SRC,
)
TOO_LARGE = rule(
    "INP103", "file-too-large", "info",
    "A file above the size limit was skipped (default 5 MB; `max-file-size` in [tool.mpsready]).",
    "Generated or data files that large are rarely code; skipping keeps the scan fast. Its contents were not "
    "checked.",
    "data/vocab.py (40 MB)",
    "Raise the limit with --max-file-size, or exclude the file.",
    SRC,
)
SYMLINK_LOOP = rule(
    "INP104", "symlink-loop", "info",
    "A symbolic link points back into a directory already being walked (or is broken); it was not followed.",
    "Following it would never end; its target is scanned once through its real path.",
    "ln -s .. loop",
    "Nothing to do, or remove the link.",
    SRC,
)
SYNTAX_ERROR = rule(
    "INP105", "python-syntax-error", "info",
    "A Python file (or notebook cell) does not parse.",
    "Its syntax tree could not be built, so its code was not checked.",
    "def broken(:",
    "Fix the syntax error.",
    SRC,
)
PYTHON2 = rule(
    "INP106", "python2-file", "info",
    "A Python 2 file (print statement, `except X, e`, backquotes).",
    "Python 3 cannot parse it, so it was not checked; it cannot run under any PyTorch that supports MPS either.",
    "print 'hello'",
    "Port the file to Python 3 (or exclude it if unused).",
    SRC,
)
MALFORMED_REQUIREMENT = rule(
    "INP107", "malformed-requirement", "info",
    "A requirement line (or a dependency string in pyproject/setup.cfg) is not valid PEP 508.",
    "pip would reject it too; the dependency it names was not checked.",
    "torch>=>2.0",
    "Fix the requirement string.",
    "PEP 508 (https://peps.python.org/pep-0508/), parsed with packaging.requirements",
)
BROKEN_TOML = rule(
    "INP108", "broken-toml", "info",
    "A TOML file (pyproject.toml, Pipfile, a lock file) does not parse.",
    "Dependencies and [tool.mpsready] settings in it were not read.",
    "[project\nname = 'x'",
    "Fix the TOML syntax.",
    "TOML 1.0 (tomllib)",
)
BROKEN_YAML = rule(
    "INP109", "broken-yaml", "info",
    "A YAML file (environment.yml) does not parse or has an unexpected shape.",
    "Its dependencies were not read.",
    "dependencies: [torch",
    "Fix the YAML syntax.",
    "YAML 1.1 (PyYAML safe_load)",
)
BAD_NOTEBOOK = rule(
    "INP110", "bad-notebook", "info",
    "A notebook that is not valid nbformat JSON (or has an unexpected cell shape).",
    "Its cells were not checked.",
    "{\"cells\": 3}",
    "Re-save the notebook with Jupyter.",
    "nbformat v4 (https://nbformat.readthedocs.io/)",
)
MALFORMED_CONFIG = rule(
    "INP111", "malformed-config", "info",
    "A config file (setup.cfg, Dockerfile, [tool.mpsready]) has an entry the scan cannot read.",
    "The entry was ignored.",
    "[tool.mpsready]\nfail-on = 'sometimes'",
    "Fix the entry; the message says what was expected.",
    SRC,
)
TOO_DEEP = rule(
    "INP112", "nested-too-deep", "info",
    "A directory tree or a file's nested data (TOML tables and dotted keys, JSON, YAML, a setup.py statement) goes "
    "deeper than the scan follows (directories: 256 levels; TOML data: 64 levels, 100 brackets on a line; a dotted "
    "key: 32 parts; Python: what CPython's parser accepts).",
    "The part below the limit was not read, so CUDA ties declared there may be missed; the rest of the tree or "
    "file was read.",
    "x = {a.a.a.a.a ... (10,000 parts) = 1}",
    "Flatten the structure, or exclude the path.",
    SRC,
)
READER_FAILED = rule(
    "INP113", "reader-failed", "info",
    "A declaration reader stopped on input it did not expect (an error inside mpsready, or a parser giving up on "
    "absurd input such as 195 nested brackets).",
    "The rest of that file was not read; the dependencies read before that point are kept and the scan goes on.",
    "setup.py with an expression nested 3,000 deep",
    "Report the file to the mpsready maintainers; simplify the expression meanwhile.",
    SRC,
)
NUMBER_TOO_LONG = rule(
    "INP114", "number-too-long", "info",
    "A TOML file holds an integer of more than 4,000 digits, past what Python converts (its int-to-str limit, "
    "4,300 digits by default: sys.get_int_max_str_digits, Python 3.11).",
    "That line was not read; the rest of the file was.",
    "x = 1111... (5,000 digits)",
    "Write the number as a string, or remove it.",
    SRC,
)
LINE_NOT_READ = rule(
    "INP115", "line-not-read", "info",
    "One line or entry of a declaration file could not be read (a value its parser refuses, such as "
    "`pkg @ https://[x/y`, an invalid IPv6 URL; or a line of more than 20,000 characters); the reader went on "
    "with the next one.",
    "A CUDA tie declared on that line may be missed; every other line of the file was read.",
    "pkg @ https://[x/y",
    "Fix or remove the line.",
    SRC,
)
READER_TIME_BUDGET = rule(
    "INP116", "reader-time-budget", "info",
    "A declaration reader spent the time one file may take (30 s of CPU) and stopped there: the last guard "
    "against input that makes a parser slow.",
    "The lines after that point were not read; the dependencies read before it are kept and the scan goes on.",
    "a generated setup.cfg of pathological lines",
    "Report the file to the mpsready maintainers; split or simplify the file meanwhile.",
    SRC,
)
NEWER_PYTHON = rule(
    "INP117", "newer-python-grammar", "info",
    "A Python file uses syntax of a newer Python than the one running the scan (a `type` alias statement or a "
    "generic `def f[T]` of 3.12, a nested f-string quote): a parser that knows every grammar (libcst's) reads it, "
    "the running interpreter's `ast` cannot.",
    "Its code was not checked, so the outlook is incomplete and the scan exits 1 (a silent pass in CI is what "
    "this prevents).",
    "type Batch = dict[str, torch.Tensor]   # scanned from Python 3.11",
    "Run the scan with the Python the project uses (3.12 or later for this file).",
    SRC,
)
