"""Driving viewer pages in tests: serve a site in a thread, wait for the page, check for errors."""

from __future__ import annotations

import contextlib
import threading


@contextlib.contextmanager
def serving(site):
    """Serve ``site`` on a free port of 127.0.0.1 in a thread; yields the page URL."""
    from memgym.viewer.server import make_server, url_of

    server = make_server(site, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield url_of(server)
    finally:
        server.shutdown()
        server.server_close()


def wait_for(driver, script: str, timeout: float = 15.0):
    """Run ``script`` (a JS expression body returning a value) until it is truthy; returns the value."""
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda d: d.execute_script(script))


def open_page(driver, url: str) -> None:
    """Load the page and wait until its first episode is drawn; fail on JavaScript errors."""
    driver.get(url)
    wait_for(driver, "return document.body.dataset.ready !== undefined")
    severe = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not severe, severe
