"""The page in headless Chromium (Debian's /usr/bin/chromium, never a downloaded browser).

Screenshots are saved in each test's temp directory and copied to /tmp/runiq-dashboard-*.png for people
to look at.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, Page, async_playwright, expect

from runiq.rag.testing import CANARY
from runiq_dashboard import DashboardCredential, DashboardOptions, DashboardRole

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
QUERY_KEY = "query-operate-key-0123456789"
OPERATE_KEY = "operate-only-key-0123456789"
RUN_TIMEOUT_MS = 20_000

pytestmark = pytest.mark.skipif(shutil.which(CHROMIUM) is None, reason="Debian's chromium is not installed")


@asynccontextmanager
async def chromium() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            await browser.close()


async def open_page(browser: Browser, url: str, problems: list[str], key: str | None = None) -> Page:
    """The page, logged in with ``key`` as the Basic password when given (the page asks with a Basic challenge)."""
    credentials: Any = {"username": "ops", "password": key} if key else None
    context = await browser.new_context(viewport={"width": 1360, "height": 900}, http_credentials=credentials)
    page = await context.new_page()
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    await page.goto(url)
    await expect(page).to_have_title("Runiq Dashboard")
    return page


async def screenshot(page: Page, tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.png"
    await page.screenshot(path=str(path), full_page=True)
    shutil.copy(path, f"/tmp/runiq-dashboard-{name}.png")


def keyed(*roles: DashboardRole, key: str) -> DashboardOptions:
    return DashboardOptions(
        credentials=(DashboardCredential(name="ops", secret=key, roles=frozenset(roles)),),
        enable_query=DashboardRole.QUERY in roles,
    )


async def test_page_lists_indexes_starts_and_cancels_ingestion(live_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Load the page from a real server, see the indexes, start one to completion, start and cancel another."""
    problems: list[str] = []
    async with chromium() as browser:
        page = await open_page(browser, live_server.url, problems)
        rows = page.locator("tbody#index-rows tr[data-index]")
        await expect(rows).to_have_count(4)
        docs = page.locator('tr[data-index="docs"]')
        await expect(docs.locator('[data-field="readiness"]')).to_have_text("not initialized")
        await expect(docs.locator('[data-field="providers"]')).to_contain_text("safe-store")
        await expect(page.locator("#roles")).to_have_text("Your access:readoperate")
        await expect(page.locator("#playground")).to_be_hidden()  # querying is off by default

        await docs.get_by_role("button", name="Start").click()
        await expect(docs.locator('[data-field="state"] .badge')).to_have_text("completed", timeout=RUN_TIMEOUT_MS)
        await expect(docs.locator('[data-field="readiness"]')).to_have_text("ready")
        await expect(docs.locator('[data-field="progress"]')).to_contain_text("2 / 2 documents")
        await expect(page.locator("#tile-documents")).to_have_text("2", timeout=RUN_TIMEOUT_MS)
        await expect(page.locator("#tile-chunks")).to_have_text("2")
        await expect(page.locator("#tile-store")).to_have_text("healthy")
        await expect(page.locator("#run-rows tr[data-run]")).to_have_count(1)

        slow = page.locator('tr[data-index="slow"]')
        await slow.get_by_role("button", name="Start").click()
        await expect(slow.locator('[data-field="state"] .badge')).to_have_text("running")
        await expect(slow.locator('[data-field="readiness"]')).to_have_text("initializing")
        await expect(slow.get_by_role("button", name="Start")).to_be_disabled()
        await slow.locator('[data-field="name"] button').click()
        await expect(page.locator("#detail-name")).to_have_text("slow")
        await expect(page.locator("#live-title")).to_have_text("Live progress")
        # The counters move on the page while the run goes on (4 documents every ~0.5 s).
        await expect(slow.locator('[data-field="progress"]')).to_have_text(re.compile(r"^[1-9]\d* / 40 documents"))
        await expect(page.locator("#live-body")).to_contain_text(re.compile(r"[1-9]\d* of 40 documents"))
        await expect(page.locator("#tile-rate")).not_to_have_text("0.0 docs/s")
        await expect(page.locator("#run-rows tr[data-run]").first).to_contain_text("running")
        await screenshot(page, tmp_path, "running")

        await slow.get_by_role("button", name="Cancel").click()
        await expect(slow.locator('[data-field="state"] .badge')).to_have_text("cancelled", timeout=RUN_TIMEOUT_MS)
        await expect(page.locator("#message")).to_contain_text("Cancelled ingestion of slow")
        await expect(slow.get_by_role("button", name="Start")).to_be_enabled()
        await screenshot(page, tmp_path, "cancelled")
    assert problems == []


async def test_failed_documents_history_and_playground_for_the_query_role(server_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A key with the query (and operate) role: a run's failed document by id and code, the run history,
    and a playground query whose hits show rank, scores, both sources' provenance and the chunk text."""
    server = server_factory(keyed(DashboardRole.OPERATE, DashboardRole.QUERY, key=QUERY_KEY)).start()
    problems: list[str] = []
    async with chromium() as browser:
        page = await open_page(browser, server.url, problems, key=QUERY_KEY)
        await expect(page.locator("#roles")).to_have_text("Your access:readoperatequery")

        broken = page.locator('tr[data-index="broken"]')
        await broken.locator('[data-field="name"] button').click()
        await expect(page.locator("#detail-name")).to_have_text("broken")
        for _ in range(2):  # two runs for the history
            await broken.get_by_role("button", name="Start").click()
            await expect(broken.get_by_role("button", name="Start")).to_be_enabled(timeout=RUN_TIMEOUT_MS)
        runs = page.locator("#run-rows tr[data-run]")
        await expect(runs).to_have_count(2, timeout=RUN_TIMEOUT_MS)
        await expect(runs.first).to_contain_text("partially completed")
        failures = page.locator("#failure-rows tr")
        await expect(failures).to_have_count(1)
        await expect(failures.first).to_contain_text(f"undecodable-{CANARY}.md")
        await expect(failures.first.locator(".badge")).to_have_text("undecodable")
        await expect(page.locator("#failures-summary")).to_contain_text("1 failed")
        await runs.nth(1).click()  # the older run's failures
        await expect(runs.nth(1)).to_have_class("selected")
        await expect(failures.first).to_contain_text(f"undecodable-{CANARY}.md")
        await expect(page.locator("#tile-documents")).to_have_text("1")
        await screenshot(page, tmp_path, "failed-documents")

        docs = page.locator('tr[data-index="docs"]')
        await docs.get_by_role("button", name="Start").click()
        await expect(docs.locator('[data-field="state"] .badge')).to_have_text("completed", timeout=RUN_TIMEOUT_MS)
        await docs.locator('[data-field="name"] button').click()
        await expect(page.locator("#detail-name")).to_have_text("docs")
        playground = page.locator("#playground")
        await expect(playground).to_be_visible()
        await page.fill("#query-text", "remote work handbook")
        await page.select_option("#query-mode", "hybrid")
        await page.fill("#query-top-k", "2")
        await page.get_by_role("button", name="Search").click()
        hits = page.locator("#hits article.hit")
        await expect(hits).to_have_count(2)
        top = hits.first
        await expect(top.locator(".hit-rank")).to_have_text("#1")
        await expect(top).to_contain_text("handbook.md")
        await expect(top.locator(".hit-content")).to_contain_text("Remote work")
        await expect(top).to_contain_text("cosine-similarity")
        await expect(top.locator(".provenance")).to_contain_text("semantic #")
        await expect(top.locator(".provenance")).to_contain_text("lexical #1")
        await expect(top.locator(".provenance")).to_contain_text("bm25")
        await expect(top.locator(".provenance")).to_contain_text("fused #1")
        await expect(page.locator("#query-message")).to_contain_text("2 hits · hybrid")
        await screenshot(page, tmp_path, "playground")

        await page.fill("#query-filters", "title=Handbook")
        await page.select_option("#query-mode", "lexical")
        await page.fill("#query-text", "policy handbook")
        await page.get_by_role("button", name="Search").click()
        await expect(page.locator("#query-message")).to_contain_text("1 hit · lexical")
        await expect(hits).to_have_count(1)
    server.stop()
    assert problems == []


async def test_without_the_query_role_the_playground_is_absent_and_the_endpoint_403(
    server_factory, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """Querying enabled, but this key holds operate only: no playground, no document ids, and a query
    the page's own origin sends is refused."""
    options = DashboardOptions(
        credentials=(
            DashboardCredential(name="ops", secret=OPERATE_KEY, roles=frozenset({DashboardRole.OPERATE})),
            DashboardCredential(name="search", secret=QUERY_KEY, roles=frozenset({DashboardRole.QUERY})),
        ),
        enable_query=True,
    )
    server = server_factory(options).start()
    problems: list[str] = []
    async with chromium() as browser:
        page = await open_page(browser, server.url, problems, key=OPERATE_KEY)
        await expect(page.locator("#roles")).to_have_text("Your access:readoperate")
        broken = page.locator('tr[data-index="broken"]')
        await broken.locator('[data-field="name"] button').click()
        await broken.get_by_role("button", name="Start").click()
        failures = page.locator("#failure-rows tr")
        await expect(failures).to_have_count(1, timeout=RUN_TIMEOUT_MS)
        await expect(failures.first).to_contain_text("Document ")
        await expect(failures.first).not_to_contain_text(CANARY)
        await expect(page.locator("#failures-summary")).to_contain_text("shown to keys with the query role")
        await expect(page.locator("#playground")).to_be_hidden()
        assert await page.locator("#playground").count() == 1  # in the document, never shown
        assert problems == []
        status = await page.evaluate(
            """async () => (await fetch("api/rag/indexes/broken/query", {
                method: "POST", credentials: "same-origin",
                headers: {"Content-Type": "application/json"}, body: JSON.stringify({text: "good"}),
            })).status"""
        )
        assert status == 403
        await screenshot(page, tmp_path, "operate-only")
    server.stop()
    assert len(problems) == 1  # Chromium reports the refused fetch on the console
    assert "403" in problems[0]
