"""Output formats for scan results; each a :class:`~.interface.ScanFormat`."""

from mpsready.scan.formats.github import GithubFormat
from mpsready.scan.formats.json import JsonFormat
from mpsready.scan.formats.md import MarkdownFormat
from mpsready.scan.formats.sarif import SarifFormat
from mpsready.scan.formats.terminal import TerminalFormat

FORMATS = {"terminal": TerminalFormat, "json": JsonFormat, "sarif": SarifFormat, "md": MarkdownFormat,
           "github": GithubFormat}

__all__ = ["FORMATS", "GithubFormat", "JsonFormat", "MarkdownFormat", "SarifFormat", "TerminalFormat"]
