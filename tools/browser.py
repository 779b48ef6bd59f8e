"""Headless Chromium looking at a locally served build of the book.

Shared by tests/test_browser.py and tools/screenshots.py. Playwright drives the Chromium that
tools/find_browser.py chose when tools/setup.sh ran (a browser already on the machine, Debian's
package, or Playwright's own); override it with AIAYN_CHROMIUM.
"""

from __future__ import annotations

import contextlib
import functools
import tempfile
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import find_browser  # tools/find_browser.py: the one place that decides which browser

# No sandbox (CI containers run as root), no GPU, and nothing that phones home on its own:
# every request the browser makes should come from the page under test.
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # one line per request would drown pytest's output
        pass


@contextlib.contextmanager
def serve(folder: Path) -> Iterator[str]:
    """Serve `folder` on 127.0.0.1 (a free port) in a thread; yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@contextlib.contextmanager
def chromium(viewport=(1280, 800), **options):
    """A Playwright BrowserContext of headless Chromium with a fresh, temporary profile."""
    from playwright.sync_api import sync_playwright

    choice = find_browser.chosen()
    if choice.path is None:
        raise FileNotFoundError(f"no browser: {choice.detail}")
    with tempfile.TemporaryDirectory(prefix="aiayn-chromium-") as profile, sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            profile, executable_path=choice.path, headless=True, args=CHROMIUM_ARGS,
            viewport={"width": viewport[0], "height": viewport[1]}, **options,
        )
        try:
            yield context
        finally:
            context.close()
