"""The output-format interface: one small class per format, each turning a ScanResult into text."""

from __future__ import annotations

import abc

from mpsready.scan.engine import ScanResult


class ScanFormat(abc.ABC):
    name: str = "?"

    @abc.abstractmethod
    def render(self, result: ScanResult) -> str:
        """The whole output as text (ending with a newline)."""
