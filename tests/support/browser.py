"""Headless Chromium under Selenium, offline, for the tests of web pages."""

from __future__ import annotations

import shutil

import pytest


def headless_chromium(logs: bool = False):
    """A headless Chromium under Selenium, offline; with ``logs``, its console and network logs kept
    (``get_log("browser")``, ``get_log("performance")``)."""
    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if not chromium or not driver_path:
        pytest.fail("chromium and chromium-driver are not installed; scripts/setup.sh installs them")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1400,2200"):
        options.add_argument(flag)
    if logs:
        options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    return webdriver.Chrome(service=Service(driver_path), options=options)
