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


# The page measures itself: the viewport, how wide the document is, which elements stick out on the right.
_MEASURE = """(() => {
  const vw = window.innerWidth, wide = [];
  document.querySelectorAll("body *").forEach((el) => {
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > vw + 1) {
      wide.push(el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + " right=" + Math.round(r.right));
    }
  });
  const cs = (sel, prop) => { const e = document.querySelector(sel); return e ? getComputedStyle(e)[prop] : null; };
  const fonts = Array.from(document.querySelectorAll("td, li, p")).map((e) => parseFloat(getComputedStyle(e).fontSize));
  return {viewport: vw, scroll_width: document.documentElement.scrollWidth, too_wide: wide.slice(0, 20),
          checklist_display: cs("#checklist", "display"), timings_display: cs("#timings", "display"),
          main_width: Math.round(document.querySelector("main").getBoundingClientRect().width),
          smallest_text_px: Math.min(...fonts), height: document.documentElement.scrollHeight};
})()"""


class _Pipe:
    """Chrome DevTools Protocol over --remote-debugging-pipe (fd 3 commands in, fd 4 replies out)."""

    def __init__(self, exe: str, profile: str):
        import os

        cmd_r, self._cmd_w = os.pipe()
        self._res_r, res_w = os.pipe()

        def wire():  # in the child, before exec: the pipe ends become fds 3 and 4, open across exec
            import fcntl

            # via copies at 10+ first: a pipe end may itself be fd 3 or 4, and dup2(fd, fd) would keep its
            # close-on-exec flag (or one end would overwrite the other)
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (cmd_r, res_w)]
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)

        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--hide-scrollbars", f"--user-data-dir={profile}",
             "--remote-debugging-pipe", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=wire, close_fds=False)  # fds 3 and 4 made by dup2 stay open across exec
        os.close(cmd_r)
        os.close(res_w)
        self._buf = b""
        self._id = 0
        self.events: list[dict] = []

    def send(self, method: str, params: dict | None = None, session: str | None = None, timeout: float = 60) -> dict:
        import json
        import os
        import select

        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._cmd_w, json.dumps(msg).encode() + b"\0")
        while True:
            while b"\0" not in self._buf:
                ready, _, _ = select.select([self._res_r], [], [], timeout)
                if not ready:
                    raise TimeoutError(f"chromium did not answer {method}")
                chunk = os.read(self._res_r, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed the DevTools pipe")
                self._buf += chunk
            raw, self._buf = self._buf.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method: str, timeout: float = 60) -> None:
        import time

        end = time.monotonic() + timeout
        while not any(e.get("method") == method for e in self.events):
            if time.monotonic() > end:
                raise TimeoutError(f"no {method}")
            self.send("Browser.getVersion")  # pumps the pipe; events arrive in between

    def close(self) -> None:
        import os

        try:
            self.send("Browser.close", timeout=10)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        os.close(self._cmd_w)
        os.close(self._res_r)


def layout(html: Path, width: int, screenshot: Path, height: int = 844, mobile: bool | None = None,
           max_shot_height: int = 6000) -> dict:
    """Open ``html`` as a device ``width`` CSS px wide (a phone when ``mobile``, default below 800 px:
    the page's meta viewport applies, as on a real phone) and return the layout the page measures in
    itself; write a PNG screenshot of the whole page (up to ``max_shot_height`` px)."""
    import base64

    exe = chromium()
    if exe is None:
        raise FileNotFoundError("chromium not installed")
    mobile = width < 800 if mobile is None else mobile
    with tempfile.TemporaryDirectory() as profile:
        cdp = _Pipe(exe, profile)
        try:
            target = cdp.send("Target.createTarget", {"url": "about:blank"})["targetId"]
            sid = cdp.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            cdp.send("Emulation.setDeviceMetricsOverride",
                     {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile}, sid)
            cdp.send("Page.enable", session=sid)
            cdp.send("Page.navigate", {"url": html.as_uri()}, sid)
            cdp.wait_event("Page.loadEventFired")
            found = cdp.send("Runtime.evaluate", {"expression": _MEASURE, "returnByValue": True}, sid)
            result = found["result"]["value"]
            shot = cdp.send("Page.captureScreenshot", {
                "format": "png", "captureBeyondViewport": True,
                "clip": {"x": 0, "y": 0, "width": width, "height": min(result["height"], max_shot_height), "scale": 1}},
                sid)
            screenshot.write_bytes(base64.b64decode(shot["data"]))
        finally:
            cdp.close()
    return result
