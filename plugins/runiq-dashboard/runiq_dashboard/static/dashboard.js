// Runiq dashboard page: lists RAG indexes and starts/cancels ingestion through the management API.
// Plain JavaScript, no build step. Everything is rendered with textContent (never innerHTML).
"use strict";

(function () {
  const ACTIVE_POLL_MS = 1500;
  const IDLE_POLL_MS = 15000;
  const NOT_AUTHORIZED = "You are not authorized to manage RAG indexes.";
  const API = "api/rag/indexes";

  let timer = null;
  let anyActive = false;
  const busy = new Set();

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function showMessage(text, isError) {
    const node = document.getElementById("message");
    node.textContent = text || "";
    node.className = isError ? "error" : "";
  }

  async function problemText(response) {
    if (response.status === 401 || response.status === 403) return NOT_AUTHORIZED;
    try {
      const body = await response.json();
      if (body && typeof body.message === "string") return body.message;
    } catch (_) { /* not JSON */ }
    return "The request failed (HTTP " + response.status + ").";
  }

  function badge(value) {
    return el("span", "badge " + (value || "none"), value ? value.replace(/_/g, " ") : "none");
  }

  function progressText(operation) {
    if (!operation) return "";
    const p = operation.progress;
    const pct = p.discoveredDocuments > 0 ? Math.round((100 * p.processedDocuments) / p.discoveredDocuments) : 0;
    return p.processedDocuments + " / " + p.discoveredDocuments + " documents (" + pct + "%), " +
      p.producedChunks + " chunks" + (p.failedDocuments ? ", " + p.failedDocuments + " failed" : "");
  }

  function cell(row, field) {
    let td = row.querySelector('[data-field="' + field + '"]');
    if (!td) {
      td = el("td", field === "name" ? "name" : "");
      td.dataset.field = field;
      row.appendChild(td);
    }
    td.replaceChildren();
    return td;
  }

  function renderRow(row, index) {
    const config = index.configuration;
    const operation = index.activeOperation || index.lastOperation;
    cell(row, "name").textContent = index.name;
    const strategy = cell(row, "strategy");
    strategy.appendChild(el("div", "", config.ingestionStrategy.replace(/_/g, " ")));
    if (config.scheduleExpression) strategy.appendChild(el("div", "muted", config.scheduleExpression));
    const providers = cell(row, "providers");
    providers.appendChild(el("div", "", config.embeddingReference || "no embedding (lexical)"));
    providers.appendChild(el("div", "muted", config.vectorStoreReference));
    cell(row, "readiness").appendChild(badge(index.readiness));
    const state = cell(row, "state");
    state.appendChild(badge(operation ? operation.state : null));
    if (operation) state.appendChild(el("div", "muted", operation.reason.replace(/_/g, " ")));
    cell(row, "progress").textContent = progressText(operation);
    cell(row, "updated").textContent = operation
      ? new Date(operation.completedAt || operation.startedAt).toLocaleTimeString() : "";
    const actions = cell(row, "actions");
    const active = Boolean(index.activeOperation);
    const pending = busy.has(index.name);
    const start = el("button", "start", "Start");
    start.type = "button";
    start.disabled = active || pending;
    start.addEventListener("click", () => command(index.name, "start"));
    const cancel = el("button", "cancel", "Cancel");
    cancel.type = "button";
    cancel.disabled = !active || pending || index.activeOperation.state === "cancelling";
    cancel.addEventListener("click", () => command(index.name, "cancel"));
    actions.append(start, cancel);
  }

  function render(indexes) {
    const body = document.getElementById("index-rows");
    if (indexes.length === 0) {
      const row = el("tr", "placeholder");
      row.appendChild(el("td", "", "No RAG indexes are registered."));
      row.firstChild.colSpan = 8;
      body.replaceChildren(row);
      return;
    }
    const rows = new Map();
    for (const row of body.querySelectorAll("tr[data-index]")) rows.set(row.dataset.index, row);
    const ordered = indexes.map((index) => {
      let row = rows.get(index.name);
      if (!row) {
        row = el("tr");
        row.dataset.index = index.name;
      }
      renderRow(row, index);
      return row;
    });
    body.replaceChildren(...ordered);
  }

  async function refresh() {
    clearTimeout(timer);
    try {
      const response = await fetch(API, { headers: { Accept: "application/json" }, credentials: "same-origin" });
      if (!response.ok) {
        showMessage(await problemText(response), true);
      } else {
        const indexes = await response.json();
        anyActive = indexes.some((index) => index.activeOperation);
        render(indexes);
      }
    } catch (_) {
      showMessage("The dashboard could not be reached.", true);
    }
    schedule();
  }

  function schedule() {
    clearTimeout(timer);
    if (document.hidden) return; // resumes on visibilitychange
    timer = setTimeout(refresh, anyActive ? ACTIVE_POLL_MS : IDLE_POLL_MS);
  }

  async function command(name, action) {
    busy.add(name);
    await refresh();
    try {
      const response = await fetch(API + "/" + encodeURIComponent(name) + "/ingestion/" + action, {
        method: "POST",
        headers: { Accept: "application/json" },
        credentials: "same-origin",
      });
      if (response.ok) {
        const operation = await response.json();
        showMessage((action === "start" ? "Started" : "Cancelled") + " ingestion of " + name +
          " (" + operation.state.replace(/_/g, " ") + ").", false);
      } else {
        showMessage(await problemText(response), true);
      }
    } catch (_) {
      showMessage("The dashboard could not be reached.", true);
    } finally {
      busy.delete(name);
    }
    await refresh();
  }

  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) refresh();
  });
  document.addEventListener("DOMContentLoaded", refresh);
})();
