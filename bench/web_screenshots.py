"""The README's screenshots of mission control, taken in headless Chromium (`python3 -m
bench.web_screenshots [--out docs]`).

Starts a gateway with two in-process workers on the demo world in a temporary folder, opens the
incidents page, posts three of the demo's fault scenarios (as `blast-radius demo` does) while the
page is open, so the live feed fills from the graph, then captures the incidents page and the
first incident's page. Needs Debian's `chromium` and `chromium-driver`, and `selenium` (dev
dependency). Prints the files written.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import yaml
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from adapters.falkordb import graph_name
from gateway.cli.demo import SCENARIO_SPACING, demo_faults_path, scenario_bodies
from gateway.ops.runtime import Runtime
from gateway.settings import Settings
from gateway.world import demo_world_path, import_world, load_world

#: Which demo scenarios to run (faults.yaml order) and the window size of the pictures.
SCENARIOS = 3
WIDTH, HEIGHT = 1400, 900


def chromium(profile: Path) -> webdriver.Chrome:
    """Headless Chromium with the flags of tests/test_web_browser.py."""
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 f"--window-size={WIDTH},{HEIGHT}", f"--user-data-dir={profile}"):  # fmt: skip
        options.add_argument(flag)
    service = Service(shutil.which("chromedriver") or "/usr/bin/chromedriver")
    return webdriver.Chrome(service=service, options=options)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs"), help="folder for the PNGs")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="blast-shots-"))
    settings = Settings.model_validate(
        {"data_dir": work, "workers": 2, "default_tenant": "demo", "live_poll_ms": 300}
    )
    faults = yaml.safe_load(demo_faults_path().read_text(encoding="utf-8"))["faults"]
    try:
        with Runtime(settings) as runtime:
            assert runtime.store is not None
            import_world(runtime.store.graph(graph_name("demo")), load_world(demo_world_path()))
            url = f"http://127.0.0.1:{runtime.serve_http('127.0.0.1', 0)}"
            runtime.start_workers()
            driver = chromium(work / "profile")
            try:
                driver.get(url + "/")
                WebDriverWait(driver, 20).until(
                    lambda d: (
                        d.find_element(By.TAG_NAME, "body").get_attribute("data-live") == "open"
                    )
                )
                now = datetime.now(UTC).replace(microsecond=0)
                with httpx.Client(base_url=url, timeout=30) as http:
                    for index, fault in enumerate(faults[:SCENARIOS]):
                        starts = now - timedelta(minutes=5) - SCENARIO_SPACING * index
                        for body in scenario_bodies(fault, starts, "firing"):
                            http.post("/api/v1/alerts", json=body).raise_for_status()
                        runtime.wait_idle()
                time.sleep(2)  # two polls: the page shows the last events
                driver.save_screenshot(str(args.out / "mission-control.png"))
                driver.find_element(By.CSS_SELECTOR, "#incidents tbody tr a").click()
                WebDriverWait(driver, 20).until(
                    lambda d: d.find_elements(By.CSS_SELECTOR, "#incident-graph[data-drawn]")
                )
                time.sleep(1)  # the layout settles
                driver.set_window_size(WIDTH, 1500)
                driver.save_screenshot(str(args.out / "incident.png"))
            finally:
                driver.quit()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for name in ("mission-control.png", "incident.png"):
        print(args.out / name)


if __name__ == "__main__":
    main()
