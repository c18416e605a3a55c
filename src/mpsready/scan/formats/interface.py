"""The output-format interface: one small class per format, each turning a ScanResult into text."""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from mpsready.scan.engine import ScanResult


class ScanFormat(abc.ABC):
    name: str = "?"
    # True: on a terminal (no -o) the format prints through a rich console (print_many) instead of text
    prints_to_console: bool = False

    @abc.abstractmethod
    def render(self, result: ScanResult) -> str:
        """The whole output as text (ending with a newline)."""

    def render_many(self, results: list[ScanResult]) -> str:
        """The output for several scans (one per path given): by default each one's text, a blank line
        between. A format with a container of its own (SARIF runs, JSON Lines) overrides this."""
        return "\n".join(self.render(r) for r in results)

    def render_all(self, results: list[ScanResult]) -> str:
        """One scan's :meth:`render`, several scans' :meth:`render_many`. ``results`` must not be empty."""
        return self.render(results[0]) if len(results) == 1 else self.render_many(results)

    def print_many(self, results: list[ScanResult], console: Console) -> None:
        """Print the scans to ``console``: a text format's output as it is, never read as rich markup (the
        terminal format overrides this to draw its tables)."""
        console.out(self.render_all(results), end="", highlight=False)
