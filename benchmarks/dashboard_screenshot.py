"""Screenshots of the dashboard over a database, through headless Chromium.

    python benchmarks/dashboard_screenshot.py --db URL --out docs/ [--page / --page /ops/OP]
        [--width 1400] [--height 900]

Each page is saved as `<out>/dashboard<page path with / as _>.png`, full width; full height
unless `--height` gives the window's (its top only: a small PNG).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from benchmarks.service_load import start_server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--page", action="append", default=[])
    parser.add_argument("--width", type=int, default=1600)
    parser.add_argument("--height", type=int, default=None)
    args = parser.parse_args()
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    server, base = start_server(args.db)
    driver = None
    try:  # the server is stopped even where the browser cannot start
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        for page in args.page or ["/"]:
            driver.set_window_size(args.width, args.height or 1000)
            driver.get(base + page)
            if args.height is None:
                height = driver.execute_script("return document.documentElement.scrollHeight")
                driver.set_window_size(args.width, min(height + 100, 6000))
            path = args.out / f"dashboard{page.rstrip('/').replace('/', '_')}.png"
            driver.save_screenshot(str(path))
            print(f"{page} -> {path}")
    finally:
        if driver is not None:
            driver.quit()
        server.terminate()


if __name__ == "__main__":
    main()
