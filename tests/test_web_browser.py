"""Mission control in a real browser: Debian's headless Chromium driven by Selenium through
Debian's chromedriver (same version), against a real gateway, FalkorDB and burst workers.

Signs in as a person, sees an incident appear live after its alerts are posted (no reload),
opens it, sees the path to the root cause drawn (server-side SVG), presses each button
(Acknowledge, Confirm cause, Wrong cause with the actual cause, Resolve) and sees each land in
the timeline, in order, as that person; signs out, and checks that the second tenant's session
sees none of it. Screenshots go to `BLAST_TEST_ARTIFACTS`
(default `test-artifacts/` in the repository; CI keeps the folder).

Skipped, with the reason, where `chromium` or `chromedriver` is not installed (`apt-get install
-y --no-install-recommends chromium chromium-driver`, which `.ci/run` does).
"""

from __future__ import annotations

import json
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
from tests.conftest import alert_body
from tests.web_site import HOOK_A, PERSON_A, VIEWER_A, VIEWER_B, Site, running_site

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


def story(driver: WebDriver) -> list[tuple[int, str]]:
    """The incident page's timeline: (ms UTC, text) per line, as shown."""
    return read(
        driver,
        lambda d: [
            (int(li.get_attribute("data-at")), li.find_element(By.CSS_SELECTOR, ".what").text)
            for li in d.find_elements(By.CSS_SELECTOR, "#events li")
        ],
    )


def submit_and_wait(
    driver: WebDriver, act: Callable[[WebDriver], object], line: str
) -> list[tuple[int, str]]:
    """Submit one of the incident page's forms with `act`, wait for the page its 303 leads to,
    then for `line` in that page's timeline. Waiting for the new page matters: a live update
    can show `line` on the old page while the submission's own navigation is still under way,
    and a form pressed then is dropped when that navigation replaces the page."""
    driver.execute_script("window.beforeSubmit = true")
    read(driver, act)  # a live update may replace the button between finding and clicking it
    wait(
        driver,
        lambda d: d.execute_script(
            "return window.beforeSubmit === undefined && document.readyState === 'complete'"
        ),
        "the page the form leads to",
    )
    wait(driver, lambda d: any(line in t for _, t in story(d)), f"{line!r} in the timeline")
    return story(driver)


def click_and_wait(driver: WebDriver, button_id: str, line: str) -> list[tuple[int, str]]:
    """Press a submit button of the incident page; see `submit_and_wait`."""
    return submit_and_wait(driver, lambda d: d.find_element(By.ID, button_id).click(), line)


def test_the_verdict_buttons_come_live_with_the_finding(site: Site, browser) -> None:
    """Before the finding, the incident page offers no verdict (the early Slack page has no
    Confirm/Wrong cause either); the buttons appear, without a reload, when the finding does."""
    incident = site.post_alert(site.a, "payment")
    driver = browser()
    sign_in(driver, site.url, VIEWER_A)
    driver.get(f"{site.url}/ui/incidents/{incident}")
    wait(driver, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-live") == "open",
         "the live event stream connected")  # fmt: skip
    driver.execute_script("window.notReloaded = true")
    summary = read(driver, lambda d: d.find_element(By.ID, "finding-summary").text)
    assert summary == "⏳ Investigating: no finding yet."
    assert not driver.find_elements(By.ID, "confirm") and not driver.find_elements(By.ID, "reject")
    assert driver.find_elements(By.ID, "acknowledge")  # the other actions are there already
    site.drain()
    wait(driver, lambda d: d.find_element(By.ID, "confirm").is_displayed(),
         "Confirm cause appeared live with the finding")  # fmt: skip
    # a later live update may replace the buttons again: read, don't hold the element
    assert read(driver, lambda d: d.find_element(By.ID, "reject").is_displayed())
    assert driver.execute_script("return window.notReloaded") is True


def test_a_long_alert_name_wraps_instead_of_pushing_columns_under_the_live_feed(
    site: Site, browser
) -> None:
    """A new user's trial: one alert named without spaces over 90 characters (a Kubernetes
    rule name with its cluster and rollout) widened the incidents table past its column, so
    Paged and State were drawn under the live feed, text over text; the alerts table of the
    incident page too. Every table stays inside the main column and the name wraps."""
    long = "KubeDeploymentReplicasMismatchShippingServiceProductionEuWest1ClusterBlueGreenCanary"
    body = json.loads(alert_body("shipping", 3))
    body["alerts"][0]["labels"]["alertname"] = long
    body["alerts"][0]["fingerprint"] = "5ca1ab1e0dd5ca1e"
    with site.client() as http:
        answer = http.post(
            "/api/v1/alerts", content=json.dumps(body),
            headers={"Authorization": f"Bearer {HOOK_A}", "Content-Type": "application/json"},
        )  # fmt: skip
    (incident,) = answer.json()["incidents"]
    site.drain()
    driver = browser()
    sign_in(driver, site.url, VIEWER_A)
    overflow = """
        const main = document.getElementById('main').getBoundingClientRect();
        const feed = document.querySelector('aside.feed').getBoundingClientRect();
        return [...document.querySelectorAll('main table')].map(t => {
            const r = t.getBoundingClientRect();
            return [t.id, Math.round(r.right - main.right), Math.round(r.right - feed.left)];
        });"""
    for url in (site.url + "/", f"{site.url}/ui/incidents/{incident}"):
        driver.get(url)
        tables = driver.execute_script(overflow)
        assert tables and all(past_main <= 0 and past_feed <= 0 for _, past_main, past_feed
                                in tables), (url, tables)  # fmt: skip
        assert long[:30] in driver.find_element(By.ID, "main").text


def test_mission_control_in_a_real_browser(site: Site, browser) -> None:
    driver = browser()
    # the viewer is in Tokyo: times show there, UTC stays on hover
    driver.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": "Asia/Tokyo"})
    sign_in(driver, site.url, VIEWER_A)
    assert driver.find_element(By.ID, "tenant").text == site.a
    assert driver.find_element(By.ID, "person").text == PERSON_A
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
    assert not read(driver, lambda d: d.find_element(By.ID, "feed-quiet").is_displayed())
    site.drain()
    wait(driver, lambda d: "◇ payment" in d.find_element(By.CSS_SELECTOR, row).text,
         "the root cause appeared live")  # fmt: skip
    assert driver.execute_script("return window.notReloaded") is True
    assert len(driver.find_elements(By.CSS_SELECTOR, "#incidents tbody tr")) == 1
    text = read(driver, lambda d: d.find_element(By.CSS_SELECTOR, row).text)
    assert "checkout, payment" in text and "not acknowledged" in text and "Example" in text
    shot(driver, "incidents")

    # the incident: the path to the root cause is drawn thick, server-side
    driver.find_element(By.CSS_SELECTOR, f"{row} a").click()
    hop = "polyline.edge.path[data-source='checkout'][data-target='payment']"
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, hop), "the path is drawn")
    width = driver.execute_script(
        f'return getComputedStyle(document.querySelector("{hop}")).strokeWidth'
    )
    assert width == "4px"
    assert driver.find_elements(By.CSS_SELECTOR, "g.node.root[data-id='payment']")
    assert read(driver, lambda d: d.find_element(By.ID, "headline").text) == (
        "◇ payment (low confidence 0.45)"
    )
    events = story(driver)
    assert events[0][1] == "Incident opened"
    assert [at for at, _ in events] == sorted(at for at, _ in events)
    assert any(t.startswith("Paged ") for _, t in events)
    # named at 0.45 (a leaf nothing measured): the timeline says so, as the badge does
    assert any(t == "Cause named, low confidence: payment" for _, t in events)
    shown, title = read(
        driver,
        lambda d: (
            (e := d.find_element(By.CSS_SELECTOR, "#events time")).text,
            e.get_attribute("title"),
        ),
    )
    assert "GMT+9" in shown and title.endswith("UTC")
    shot(driver, "incident")

    # keyboard: the first Tab reaches the skip link; Acknowledge is a focusable button
    driver.find_element(By.TAG_NAME, "body").send_keys(Keys.TAB)
    assert driver.switch_to.active_element.get_attribute("class") == "skip"
    ack = driver.find_element(By.ID, "acknowledge")
    driver.execute_script("arguments[0].focus()", ack)
    assert driver.switch_to.active_element == ack
    submit_and_wait(driver, lambda d: ack.send_keys(Keys.ENTER), f"Acknowledged by {PERSON_A}")
    assert read(driver, lambda d: d.find_element(By.ID, "acked").text).startswith(f"✓ {PERSON_A}")
    assert not driver.find_elements(By.ID, "acknowledge")  # done: the button goes

    # each verdict button acts, as this person, and the timeline keeps its order
    click_and_wait(driver, "confirm", f"Cause confirmed (payment) by {PERSON_A}")
    # type and press in one go: a live update (the confirmation's own notices) may redraw the
    # form between the two, and a redrawn form has lost what was typed
    submit_and_wait(
        driver,
        lambda d: d.execute_script(
            "document.getElementById('actual-cause').value = 'postgres';"
            "document.getElementById('reject').click();"
        ),
        f"Cause corrected to postgres by {PERSON_A}",
    )
    assert (
        read(driver, lambda d: d.find_element(By.ID, "headline").text) == "✎ corrected to postgres"
    )
    events = click_and_wait(driver, "resolve", f"Resolved by {PERSON_A}")
    texts = [t for _, t in events]
    assert (
        texts.index(f"Acknowledged by {PERSON_A}")
        < texts.index(f"Cause confirmed (payment) by {PERSON_A}")
        < texts.index(f"Cause corrected to postgres by {PERSON_A}")
        < texts.index(f"Resolved by {PERSON_A}")
    )
    assert [at for at, _ in events] == sorted(at for at, _ in events)
    assert "resolved" in read(driver, lambda d: d.find_element(By.ID, "status").text)
    assert not driver.find_elements(By.ID, "resolve")
    shot(driver, "resolved")
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
    assert "cart" in rows[0][1]
    driver.get(f"{site.url}/ui/incidents/{incident}")
    assert "No such incident" in driver.find_element(By.TAG_NAME, "h1").text
    for path in ("/ui/world", "/ui/memory", "/ui/health"):
        driver.get(site.url + path)
        assert incident not in driver.page_source
    driver.get(site.url + "/ui/world")
    assert driver.find_elements(By.CSS_SELECTOR, "#world-graph svg g.node[data-id='payment']")
    shot(driver, "world")
