"""The page in headless Chromium (Debian's /usr/bin/chromium, never a downloaded browser)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from playwright.async_api import async_playwright, expect

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

pytestmark = pytest.mark.skipif(shutil.which(CHROMIUM) is None, reason="Debian's chromium is not installed")


async def test_page_lists_indexes_starts_and_cancels_ingestion(live_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Load the page from a real server, see the indexes, start one to completion, start and cancel another."""
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = await browser.new_page(viewport={"width": 1280, "height": 520})
            problems: list[str] = []
            page.on("pageerror", lambda error: problems.append(str(error)))
            page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
            await page.goto(live_server.url)
            await expect(page).to_have_title("Runiq Dashboard")

            rows = page.locator("tbody#index-rows tr[data-index]")
            await expect(rows).to_have_count(4)
            docs = page.locator('tr[data-index="docs"]')
            await expect(docs.locator('[data-field="readiness"]')).to_have_text("not initialized")
            await expect(docs.locator('[data-field="providers"]')).to_contain_text("safe-store")

            await docs.get_by_role("button", name="Start").click()
            await expect(docs.locator('[data-field="state"] .badge')).to_have_text("completed", timeout=10_000)
            await expect(docs.locator('[data-field="readiness"]')).to_have_text("ready")
            await expect(docs.locator('[data-field="progress"]')).to_contain_text("2 / 2 documents")

            slow = page.locator('tr[data-index="slow"]')
            await slow.get_by_role("button", name="Start").click()
            await expect(slow.locator('[data-field="state"] .badge')).to_have_text("running")
            await expect(slow.locator('[data-field="readiness"]')).to_have_text("initializing")
            await expect(slow.get_by_role("button", name="Start")).to_be_disabled()
            await page.screenshot(path=str(tmp_path / "dashboard-running.png"), full_page=True)

            await slow.get_by_role("button", name="Cancel").click()
            await expect(slow.locator('[data-field="state"] .badge')).to_have_text("cancelled", timeout=10_000)
            await expect(slow.locator('[data-field="readiness"]')).to_have_text("not initialized")
            await expect(page.locator("#message")).to_contain_text("Cancelled ingestion of slow")
            await expect(slow.get_by_role("button", name="Start")).to_be_enabled()
            screenshot = tmp_path / "dashboard.png"
            await page.screenshot(path=str(screenshot), full_page=True)
            shutil.copy(screenshot, "/tmp/runiq-dashboard.png")
            shutil.copy(tmp_path / "dashboard-running.png", "/tmp/runiq-dashboard-running.png")
            assert problems == []
        finally:
            await browser.close()
