"""Shared by the browser tests (a plain module, not a conftest): where Debian's `chromium` and
`chromedriver` are, how long a page may take, and the switch that keeps Chromium off the network."""

from __future__ import annotations

import shutil
from pathlib import Path

SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
WAIT_SECONDS = 60
# Every host name fails to resolve, so a page can reach nothing but the server on 127.0.0.1.
OFFLINE = "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"
