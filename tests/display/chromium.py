"""Open an HTML page in a real headless Chromium: its DOM after scripts ran, and its console.

Each inline script a test adds to a report must be allowed by the report's Content-Security-Policy
like the report's own script is: :func:`allow_inline_scripts` names every inline script of the page
by its hash, as :func:`perfcast.display.html.build_report` does for its one script.
"""

from __future__ import annotations

import base64
import hashlib
import re
import shutil
import subprocess
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
_SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)
_SCRIPT_SRC = re.compile(r"script-src [^;\"]*")


def script_hash(text: str) -> str:
    """The CSP source expression ``'sha256-...'`` that allows an inline script with this text."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def allow_inline_scripts(html: str) -> str:
    """The page with its policy's ``script-src`` naming exactly its inline scripts."""
    allowed = " ".join(script_hash(text) for text in _SCRIPT.findall(html))
    policy, count = _SCRIPT_SRC.subn(f"script-src {allowed}", html, count=1)
    assert count == 1, "the page has no script-src policy"
    return policy


def with_script(html: str, script: str) -> str:
    """The page with one more inline script at the end of the body, allowed by the policy."""
    return allow_inline_scripts(html.replace("</body>", f"<script>{script}</script></body>"))


def chromium(tmp_path: Path, html: str, *extra: str) -> tuple[str, list[str]]:
    """Chromium's standard output (e.g. the DOM with ``--dump-dom``) and its console lines."""
    if not CHROMIUM.exists() or shutil.which(str(CHROMIUM)) is None:
        pytest.skip("Debian's chromium is not installed (scripts/setup installs it)")
    page = tmp_path / "report.html"
    page.write_text(html, encoding="utf-8")
    command = [
        str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
        "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr",
        "--v=0", *extra, page.as_uri(),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    return done.stdout, console
