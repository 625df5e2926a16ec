"""Mission control in a real browser: Debian's headless Chromium driven by Selenium through
Debian's chromedriver (same version), against a real gateway, FalkorDB and burst workers.

Signs in, sees an incident appear live after its alerts are posted (no reload), opens it, sees
the path to the root cause drawn, clicks Confirm and sees the verdict, signs out, and checks
that the second tenant's session sees none of it. Screenshots go to `BLAST_TEST_ARTIFACTS`
(default `test-artifacts/` in the repository; CI keeps the folder).

Skipped, with the reason, where `chromium` or `chromedriver` is not installed (`apt-get install
-y --no-install-recommends chromium chromium-driver`, which `.ci/run` does).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from adapters.falkordb import EmbeddedFalkorDB, GraphStore
from tests.web_site import VIEWER_A, VIEWER_B, Site, running_site

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
ARTIFACTS = Path(
    os.environ.get("BLAST_TEST_ARTIFACTS") or Path(__file__).resolve().parents[1] / "test-artifacts"
)
#: Chromium flags for a test: headless, no sandbox (CI runs as root), nothing phoning home.
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1400,1100",
)  # fmt: skip
#: How long to wait for something the live feed should bring (s): polls are 0.2 s here.
LIVE_WAIT_S = 20

pytestmark = pytest.mark.skipif(
    CHROMIUM is None or CHROMEDRIVER is None,
    reason="needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver)",
)


@pytest.fixture
def site(falkordb: EmbeddedFalkorDB, store: GraphStore, tmp_path: Path) -> Iterator[Site]:
    """Two tenants with the demo world each, on a free loopback port."""
    with running_site(falkordb, store, tmp_path) as found:
        yield found


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Callable[[], WebDriver]]:
    """Start headless Chromium sessions (each with a new profile folder); all quit at the end."""
    started: list[WebDriver] = []

    def start() -> WebDriver:
        options = webdriver.ChromeOptions()
        assert CHROMIUM is not None and CHROMEDRIVER is not None
        options.binary_location = CHROMIUM
        for flag in FLAGS:
            options.add_argument(flag)
        options.add_argument(f"--user-data-dir={tmp_path / f'profile-{len(started)}'}")
        driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        started.append(driver)
        return driver

    yield start
    for driver in started:
        driver.quit()


def shot(driver: WebDriver, name: str) -> None:
    """Save a full-height screenshot of the page as `<ARTIFACTS>/web-<name>.png`."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1400, min(max(int(height), 900), 4000))
    driver.save_screenshot(str(ARTIFACTS / f"web-{name}.png"))
    driver.set_window_size(1400, 1100)


def wait(driver: WebDriver, test: Callable[[WebDriver], object], what: str) -> object:
    """Poll `test` until it returns something truthy. A live update may replace an element
    between finding it and reading it (a stale reference): that counts as "not yet"."""
    return WebDriverWait(
        driver, LIVE_WAIT_S, poll_frequency=0.1,
        ignored_exceptions=(NoSuchElementException, StaleElementReferenceException),
    ).until(test, message=what)  # fmt: skip


def read(driver: WebDriver, get: Callable[[WebDriver], Any]) -> Any:
    """`get(driver)`, read again when a live update replaced the element mid-read."""
    found: tuple[Any] = wait(driver, lambda d: (get(d),), "a stable read")  # type: ignore[assignment]
    return found[0]


def sign_in(driver: WebDriver, url: str, token: str) -> None:
    driver.get(url + "/")
    assert "/ui/login" in driver.current_url  # no session: the sign-in form
    driver.find_element(By.ID, "token").send_keys(token)
    driver.find_element(By.ID, "sign-in").click()
    wait(driver, lambda d: d.current_url == url + "/", "back on the incidents page")
    wait(driver, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-live") == "open",
         "the live event stream connected")  # fmt: skip


def test_mission_control_in_a_real_browser(site: Site, browser) -> None:
    driver = browser()
    # the viewer is in Tokyo: times show there, UTC stays on hover
    driver.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": "Asia/Tokyo"})
    sign_in(driver, site.url, VIEWER_A)
    assert driver.find_element(By.ID, "tenant").text == site.a
    assert driver.find_elements(By.ID, "no-incidents")
    driver.execute_script("window.notReloaded = true")

    # alerts arrive: the incident appears without a reload, then its root cause
    site.post_alert(site.b, "cart")  # the other tenant's, never on this page
    incident = site.post_alert(site.a, "payment")
    assert site.post_alert(site.a, "checkout") == incident
    row = f'tr[data-key="{incident}"]'
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, row), "the incident row appeared live")
    feed = read(driver, lambda d: d.find_element(By.ID, "feed").text)
    assert "new alert" in feed and "new incident" in feed
    site.drain()
    wait(driver, lambda d: "payment" in d.find_element(By.CSS_SELECTOR, row).text,
         "the root cause appeared live")  # fmt: skip
    assert driver.execute_script("return window.notReloaded") is True
    assert len(driver.find_elements(By.CSS_SELECTOR, "#incidents tbody tr")) == 1
    feed = read(driver, lambda d: d.find_element(By.ID, "feed").text)
    assert "step(s) checkpointed" in feed and "a finding was written" in feed
    shown, title = read(
        driver,
        lambda d: (
            (e := d.find_element(By.CSS_SELECTOR, f"{row} time")).text,
            e.get_attribute("title"),
        ),
    )
    assert "GMT+9" in shown and title.endswith("UTC")
    shot(driver, "mission-control")

    # the incident: the path to the root cause is drawn
    driver.find_element(By.CSS_SELECTOR, f"{row} a").click()
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#incident-graph[data-drawn]"),
         "the graph was drawn")  # fmt: skip
    drawn = driver.execute_script(
        "var cy = window.blastGraphs['incident-graph'];"
        "return cy.edges('.path').map(function (e) {"
        "  var box = e.renderedBoundingBox();"
        "  return [e.source().id(), e.target().id(), box.w + box.h > 0, e.style('width')]; });"
    )
    assert ["checkout", "payment", True, "5px"] in drawn
    root = driver.execute_script(
        "return window.blastGraphs['incident-graph'].$('#payment').hasClass('root')"
    )
    assert root is True
    assert "checkout → payment" in read(driver, lambda d: d.find_element(By.ID, "paths").text)
    assert "coverage_walk" in read(driver, lambda d: d.find_element(By.ID, "steps").text)
    shot(driver, "incident")

    # keyboard: the first Tab reaches the skip link; Confirm is a focusable button
    driver.find_element(By.TAG_NAME, "body").send_keys(Keys.TAB)
    assert driver.switch_to.active_element.get_attribute("class") == "skip"
    confirm = driver.find_element(By.ID, "confirm")
    driver.execute_script("arguments[0].focus()", confirm)
    assert driver.switch_to.active_element == confirm
    confirm.send_keys(Keys.ENTER)
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#verdict-list .verdict"),
         "the verdict is listed")  # fmt: skip
    verdict = read(driver, lambda d: d.find_element(By.CSS_SELECTOR, "#verdict-list .verdict").text)
    assert verdict == "confirmed"
    assert "payment" in read(driver, lambda d: d.find_element(By.ID, "verdict-list").text)
    shot(driver, "verdict")
    errors = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []  # no script error, no resource the policy (CSP) blocked

    # sign out, then the second tenant: none of it
    driver.find_element(By.CSS_SELECTOR, "form[action='/ui/logout'] button").click()
    wait(driver, lambda d: "/ui/login" in d.current_url, "signed out")
    driver.get(site.url + "/")
    assert "/ui/login" in driver.current_url
    sign_in(driver, site.url, VIEWER_B)
    assert driver.find_element(By.ID, "tenant").text == site.b
    rows = read(
        driver,
        lambda d: [
            (r.get_attribute("data-key"), r.text)
            for r in d.find_elements(By.CSS_SELECTOR, "#incidents tbody tr")
        ],
    )
    assert len(rows) == 1 and incident not in rows[0][0]
    assert "cart" in rows[0][1] or "HighErrorRate" in rows[0][1]
    driver.get(f"{site.url}/ui/incidents/{incident}")
    assert "No such incident" in driver.find_element(By.TAG_NAME, "h1").text
    for path in ("/ui/world", "/ui/memory", "/ui/health"):
        driver.get(site.url + path)
        assert incident not in driver.page_source
    driver.get(site.url + "/ui/world")
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#world-graph[data-drawn]"),
         "the topology was drawn")  # fmt: skip
    shot(driver, "world")
