"""The docs' screenshots of mission control, taken in headless Chromium (`python3 -m
bench.web_screenshots [--out docs] [--scenarios 4]`).

Starts a gateway with two in-process workers on the demo world in a temporary folder, with the
demo's local Prometheus replaying the service-graph evidence (as `blast-radius demo --evidence`
does), signs in as one person with their own viewer token, posts the demo's fault scenarios
while the incidents page is open (so the live feed fills from the graph), acknowledges one
incident with the page's button, then captures:

- `web-incidents.png`: the list;
- `web-incident-conclusive.png` and `web-incident-inconclusive.png`: one incident of each;
- `web-incident-escalated.png`: one more fault, posted after the world is imported again with
  an escalation policy on every team (one level, `ESCALATE_AFTER` after the first page, to the
  default team's on-call): nobody acknowledges it, and the workers escalate it;
- `web-memory.png` (the playbook the learner wrote from another incident a person confirmed
  with the page's button), `web-world.png`.

Needs Debian's `chromium`, `chromium-driver` and `prometheus` (promtool), and `selenium` (dev
dependency). Prints each file written and the incident it shows, then the round trip of the
list, two incident pages and the world page (`TIMED_RUNS` GETs each, p50 and max in ms).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import yaml
from pydantic import SecretStr
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from adapters.falkordb import graph_name
from gateway.cli.demo import SCENARIO_SPACING, demo_faults_path, rfc3339, scenario_bodies
from gateway.cli.demo_evidence import DEMO_STEP_S, PrometheusServer, demo_timeline
from gateway.ops.runtime import Runtime
from gateway.settings import Settings
from gateway.world import demo_world_path, import_world, load_world
from gateway.world.model import EscalationLevelSpec, TeamTarget

#: Window width of the pictures (px); each is as tall as its page, up to `MAX_HEIGHT`.
WIDTH, MAX_HEIGHT = 1400, 2600
TENANT, PERSON = "demo", "priya@example.com"
#: Server round trips timed per page after the pictures (one person, workers idle).
TIMED_RUNS = 20
#: The one escalation level every team gets before the last fault (short: the script waits).
ESCALATE_AFTER = "5s"
#: Random per run: the gateway lives only while the script runs.
TOKENS = {"hook": "hook-" + "7f3a9c2e5b1d4086" * 2, "viewer": "view-" + "c4e8a1f6b3d29057" * 2}


def chromium(profile: Path) -> webdriver.Chrome:
    """Headless Chromium with the flags of tests/test_web_browser.py."""
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 f"--window-size={WIDTH},900", f"--user-data-dir={profile}"):  # fmt: skip
        options.add_argument(flag)
    service = Service(shutil.which("chromedriver") or "/usr/bin/chromedriver")
    return webdriver.Chrome(service=service, options=options)


def shot(driver: webdriver.Chrome, path: Path) -> None:
    """A picture of the whole page (up to `MAX_HEIGHT` px tall)."""
    height = int(driver.execute_script("return document.documentElement.scrollHeight"))
    metrics = {"width": WIDTH, "height": min(max(height, 700), MAX_HEIGHT),
               "deviceScaleFactor": 1, "mobile": False}  # fmt: skip
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    time.sleep(0.3)
    driver.save_screenshot(str(path))
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    print(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs"), help="folder for the PNGs")
    parser.add_argument("--scenarios", type=int, default=5, help="demo faults to run (first n)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="blast-shots-"))
    faults = yaml.safe_load(demo_faults_path().read_text(encoding="utf-8"))["faults"]
    faults = faults[: args.scenarios + 1]  # the last one is the escalated incident's
    base = datetime.now(UTC).replace(microsecond=0) - SCENARIO_SPACING * (len(faults) + 1)
    starts = {f["flag"]: base + SCENARIO_SPACING * i for i, f in enumerate(faults)}
    edges, times = demo_timeline({k: int(v.timestamp()) for k, v in starts.items()})
    replay = PrometheusServer(work / "prometheus", edges, None, times=times, step_s=DEMO_STEP_S)
    settings = Settings.model_validate({
        "data_dir": work, "workers": 2, "default_tenant": TENANT, "live_poll_ms": 300,
        "prometheus_url": replay.url, "dev": True,
        "webhook_tokens": {TENANT: SecretStr(TOKENS["hook"])},
        "viewer_tokens": {f"{TENANT}:{PERSON}": SecretStr(TOKENS["viewer"])},
        "alertmanager_url": "http://alertmanager.demo:9093",
    })  # fmt: skip
    try:
        with Runtime(settings) as runtime:
            assert runtime.store is not None
            graph = runtime.store.graph(graph_name(TENANT))
            import_world(graph, load_world(demo_world_path()))
            url = f"http://127.0.0.1:{runtime.serve_http('127.0.0.1', 0)}"
            runtime.start_workers()
            driver = chromium(work / "profile")
            try:
                run(driver, url, runtime, graph, faults, starts, args.out)
            finally:
                driver.quit()
    finally:
        replay.stop()
        shutil.rmtree(work, ignore_errors=True)


def lone_alert(before: datetime) -> dict[str, Any]:
    """One alert on `cart` two hours before the scenarios (outside the evidence's window, so
    nothing measured separates cart from valkey-cart behind it: an inconclusive finding), with
    a runbook link as Prometheus rules carry one (`runbook_url`)."""
    labels = {"alertname": "HighErrorRate", "service": "cart", "severity": "critical",
              "namespace": "opentelemetry-demo"}  # fmt: skip
    alert = {
        "status": "firing", "labels": labels, "startsAt": rfc3339(before - timedelta(hours=2)),
        "annotations": {"summary": "errors on cart",
                        "runbook_url": "https://runbooks.example.com/cart/high-error-rate"},
        "endsAt": "0001-01-01T00:00:00Z", "fingerprint": "00000000000ca47",
        "generatorURL": "http://prometheus.demo:9090/graph?g0.expr=cart_errors",
    }  # fmt: skip
    return {"version": "4", "groupKey": '{}:{service="cart"}', "truncatedAlerts": 0,
            "status": "firing", "receiver": "blast-radius", "groupLabels": {"service": "cart"},
            "commonLabels": labels, "commonAnnotations": {},
            "externalURL": "http://alertmanager.demo:9093", "alerts": [alert]}  # fmt: skip


def escalate_one(
    url: str, runtime: Runtime, graph: Any, fault: dict[str, Any],
    starts: dict[str, datetime], seen: set[str],
) -> str | None:  # fmt: skip
    """Import the world again with a one-level escalation policy on every team, post `fault`
    and return its new incident's id (None if it opened none). Incidents paged before have no
    escalation: a policy applies to pages sent while it is in the world."""
    world = load_world(demo_world_path())
    for team in world.teams:
        target = TeamTarget(team=world.default_team)
        team.escalation_policy = [EscalationLevelSpec(after=ESCALATE_AFTER, notify=[target])]
    import_world(graph, world)
    bearer = {"Authorization": f"Bearer {TOKENS['hook']}"}
    with httpx.Client(base_url=url, timeout=30, headers=bearer) as http:
        for body in scenario_bodies(fault, starts[fault["flag"]], "firing"):
            http.post("/api/v1/alerts", json=body).raise_for_status()
    runtime.wait_idle()
    rows = graph.rows("web_incidents", {"status": None, "limit": 50, "now": 0})
    return next((r["id"] for r in rows if r["id"] not in seen), None)


def run(
    driver: webdriver.Chrome, url: str, runtime: Runtime, graph: Any,
    faults: list[dict[str, Any]], starts: dict[str, datetime], out: Path,
) -> None:  # fmt: skip
    """Sign in, post the scenarios, act on two incidents and take the pictures."""
    # a live refresh may replace an element between finding and reading it: "not yet"
    wait = WebDriverWait(driver, 30, ignored_exceptions=(StaleElementReferenceException,))
    driver.get(url + "/ui/login")
    driver.find_element(By.ID, "token").send_keys(TOKENS["viewer"])
    driver.find_element(By.ID, "sign-in").click()
    wait.until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-live") == "open")
    bearer = {"Authorization": f"Bearer {TOKENS['hook']}"}
    with httpx.Client(base_url=url, timeout=30, headers=bearer) as http:
        for fault in faults[:-1]:
            for body in scenario_bodies(fault, starts[fault["flag"]], "firing"):
                http.post("/api/v1/alerts", json=body).raise_for_status()
            runtime.wait_idle()
        http.post("/api/v1/alerts", json=lone_alert(min(starts.values()))).raise_for_status()
        runtime.wait_idle()
    rows = graph.rows("web_incidents", {"status": None, "limit": 50, "now": 0})
    conclusive = next((r["id"] for r in rows if r["root_cause"]), None)
    inconclusive = next((r["id"] for r in rows if not r["root_cause"]), None)
    if conclusive:  # a person acknowledges it with the page's button
        driver.get(f"{url}/ui/incidents/{conclusive}")
        driver.find_element(By.ID, "acknowledge").click()
        wait.until(lambda d: "✓" in d.find_element(By.ID, "acked").text)
    confirmed = next((r["id"] for r in rows if r["root_cause"]
                      and r["id"] != conclusive), None)  # fmt: skip
    if confirmed:  # a person confirms one with the page's button: the learner writes a playbook
        driver.get(f"{url}/ui/incidents/{confirmed}")
        driver.find_element(By.ID, "confirm").click()
        wait.until(lambda d: "Cause confirmed" in d.find_element(By.ID, "events").text)
        runtime.wait_idle()
    escalated = escalate_one(url, runtime, graph, faults[-1], starts, {r["id"] for r in rows})
    if escalated:  # nobody acknowledges it: the workers escalate it after ESCALATE_AFTER
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            people = graph.one("web_incident_people", {"incident_id": escalated})
            if people and people["escalation_level"]:
                break
            time.sleep(1)
        else:
            print(f"{escalated}: not escalated within 120 s")
    driver.get(url + "/")
    time.sleep(1.5)  # the feed shows the last events
    shot(driver, out / "web-incidents.png")
    for name, incident in (("conclusive", conclusive), ("inconclusive", inconclusive),
                           ("escalated", escalated)):  # fmt: skip
        if incident is None:
            print(f"no {name} incident among the scenarios run: try more --scenarios")
            continue
        driver.get(f"{url}/ui/incidents/{incident}")
        shot(driver, out / f"web-incident-{name}.png")
        print(f"  ({incident})")
    for page in ("memory", "world"):
        driver.get(f"{url}/ui/{page}")
        shot(driver, out / f"web-{page}.png")
    cookie = {c["name"]: c["value"] for c in driver.get_cookies()}
    paths = {"list": "/", "conclusive": f"/ui/incidents/{conclusive}",
             "escalated": f"/ui/incidents/{escalated}", "world": "/ui/world"}  # fmt: skip
    with httpx.Client(base_url=url, cookies=cookie, timeout=30) as http:
        for name, path in paths.items():
            took = []
            for _ in range(TIMED_RUNS):
                started = time.perf_counter()
                http.get(path).raise_for_status()
                took.append((time.perf_counter() - started) * 1000)
            took.sort()
            print(f"GET {name}: p50 {took[len(took) // 2]:.1f} ms, max {took[-1]:.1f} ms "
                  f"({TIMED_RUNS} runs)")  # fmt: skip


if __name__ == "__main__":
    main()
