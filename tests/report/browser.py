"""Run Debian's chromium headless on an HTML file: the DOM after scripts, and a screenshot."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")


def chromium() -> str | None:
    for c in CANDIDATES:
        if Path(c).exists():
            return c
    return shutil.which("chromium")


def render(html: Path, screenshot: Path, width: int = 1200, height: int = 2400, timeout: float = 90) -> str:
    """Load ``html`` in headless chromium; write a PNG screenshot; return the serialised DOM."""
    exe = chromium()
    if exe is None:
        raise FileNotFoundError("chromium not installed")
    with tempfile.TemporaryDirectory() as profile:
        base = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--hide-scrollbars", f"--user-data-dir={profile}", f"--window-size={width},{height}"]
        subprocess.run(base + [f"--screenshot={screenshot}", html.as_uri()], check=True, capture_output=True,
                       timeout=timeout)
        dom = subprocess.run(base + ["--dump-dom", html.as_uri()], check=True, capture_output=True, text=True,
                             timeout=timeout)
    return dom.stdout
