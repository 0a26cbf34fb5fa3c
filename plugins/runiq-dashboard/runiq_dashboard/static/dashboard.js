// Runiq dashboard page: the indexes, and for the selected one its live progress, run history, failed
// documents, store, configuration and (for the query role) a query playground.
// Plain JavaScript, no build step. Everything is rendered with textContent (never innerHTML).
"use strict";

(function () {
  const ACTIVE_POLL_MS = 1500;
  const IDLE_POLL_MS = 15000;
  const RUNS_SHOWN = 20;
  const NOT_AUTHORIZED = "You are not authorized to manage RAG indexes.";
  const UNREACHABLE = "The dashboard could not be reached.";
  const API = "api/rag/indexes";

  const state = {
    indexes: [],
    selected: null,
    roles: new Set(["read"]),
    runs: [],
    runsFetchedAt: 0,
    runsKey: "",
    selectedRun: null,
    failuresKey: "",
  };
  let timer = null;
  let anyActive = false;
  const busy = new Set();

  // ---- small helpers -------------------------------------------------------------------------
  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function byId(id) {
    return document.getElementById(id);
  }

  function words(value) {
    return value ? String(value).replace(/_/g, " ") : "";
  }

  function badge(value, extra) {
    return el("span", "badge " + (value || "none") + (extra ? " " + extra : ""), value ? words(value) : "none");
  }

  function count(value) {
    return typeof value === "number" ? value.toLocaleString() : "–";
  }

  function duration(ms) {
    if (typeof ms !== "number") return "–";
    if (ms < 1000) return Math.round(ms) + " ms";
    const seconds = ms / 1000;
    if (seconds < 60) return seconds.toFixed(seconds < 10 ? 2 : 1) + " s";
    const minutes = Math.floor(seconds / 60);
    if (minutes < 60) return minutes + " min " + Math.round(seconds % 60) + " s";
    return Math.floor(minutes / 60) + " h " + (minutes % 60) + " min";
  }

  function clock(iso) {
    return iso ? new Date(iso).toLocaleTimeString() : "";
  }

  function when(iso) {
    if (!iso) return "";
    const date = new Date(iso);
    const today = new Date().toDateString() === date.toDateString();
    return today ? date.toLocaleTimeString() : date.toLocaleString();
  }

  function ago(iso) {
    if (!iso) return "";
    const seconds = Math.max(0, Math.round((Date.now() - new Date(iso).getTime()) / 1000));
    if (seconds < 60) return seconds + " s ago";
    if (seconds < 3600) return Math.round(seconds / 60) + " min ago";
    if (seconds < 86400) return Math.round(seconds / 3600) + " h ago";
    return Math.round(seconds / 86400) + " d ago";
  }

  function rate(operation) {
    const seconds = operation.durationMilliseconds / 1000;
    return seconds > 0 ? operation.progress.processedDocuments / seconds : null;
  }

  function rateText(value) {
    if (value === null || value === undefined) return "–";
    return value >= 100 ? Math.round(value).toLocaleString() : value.toFixed(1);
  }

  function percent(progress) {
    return progress.discoveredDocuments > 0
      ? Math.round((100 * progress.processedDocuments) / progress.discoveredDocuments) : 0;
  }

  function score(value, digits) {
    return typeof value === "number" ? value.toFixed(digits === undefined ? 4 : digits) : "–";
  }

  function showMessage(text, isError) {
    const node = byId("message");
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

  async function getJson(url) {
    const response = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
    if (!response.ok) return { ok: false, response };
    return { ok: true, body: await response.json() };
  }

  function indexUrl(name, suffix) {
    return API + "/" + encodeURIComponent(name) + (suffix || "");
  }

  function selectedIndex() {
    return state.indexes.find((index) => index.name === state.selected) || null;
  }

  // ---- the index table -----------------------------------------------------------------------
  function progressText(operation) {
    if (!operation) return "";
    const p = operation.progress;
    return p.processedDocuments + " / " + p.discoveredDocuments + " documents (" + percent(p) + "%), " +
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

  function actionButtons(index) {
    const active = Boolean(index.activeOperation);
    const pending = busy.has(index.name);
    const mayOperate = state.roles.has("operate");
    const start = el("button", "start", "Start");
    start.type = "button";
    start.disabled = active || pending || !mayOperate;
    start.addEventListener("click", (event) => { event.stopPropagation(); command(index.name, "start"); });
    const cancel = el("button", "cancel", "Cancel");
    cancel.type = "button";
    cancel.disabled = !active || pending || !mayOperate || index.activeOperation.state === "cancelling";
    cancel.addEventListener("click", (event) => { event.stopPropagation(); command(index.name, "cancel"); });
    if (!mayOperate) start.title = cancel.title = "Your key does not hold the operate role.";
    return [start, cancel];
  }

  function renderRow(row, index) {
    const config = index.configuration;
    const operation = index.activeOperation || index.lastOperation;
    const name = el("button", "link", index.name);
    name.type = "button";
    name.addEventListener("click", () => select(index.name));
    cell(row, "name").appendChild(name);
    const strategy = cell(row, "strategy");
    strategy.appendChild(el("div", "", words(config.ingestionStrategy)));
    if (config.scheduleExpression) strategy.appendChild(el("div", "muted", config.scheduleExpression));
    const providers = cell(row, "providers");
    providers.appendChild(el("div", "", config.embeddingReference || "no embedding (lexical)"));
    providers.appendChild(el("div", "muted", config.vectorStoreReference));
    cell(row, "readiness").appendChild(badge(index.readiness));
    const stateCell = cell(row, "state");
    stateCell.appendChild(badge(operation ? operation.state : null));
    if (operation) stateCell.appendChild(el("div", "muted", words(operation.reason)));
    cell(row, "progress").textContent = progressText(operation);
    const updated = cell(row, "updated");
    if (operation) {
      updated.appendChild(el("div", "", clock(operation.updatedAt)));
      updated.appendChild(el("div", "muted", ago(operation.updatedAt)));
    }
    cell(row, "actions").append(...actionButtons(index));
    row.classList.toggle("selected", index.name === state.selected);
    row.setAttribute("aria-selected", index.name === state.selected ? "true" : "false");
  }

  function renderTable(indexes) {
    const body = byId("index-rows");
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
        row.addEventListener("click", () => select(index.name));
      }
      renderRow(row, index);
      return row;
    });
    body.replaceChildren(...ordered);
  }

  // ---- the selected index --------------------------------------------------------------------
  function setTile(name, value, note) {
    const node = byId("tile-" + name);
    node.replaceChildren();
    if (value instanceof Node) node.appendChild(value);
    else node.textContent = value;
    byId("tile-" + name + "-note").textContent = note || "";
  }

  function renderHead(index) {
    const operation = index.activeOperation || index.lastOperation;
    byId("detail-name").textContent = index.name;
    byId("detail-readiness").replaceChildren(badge(index.readiness));
    byId("detail-state").replaceChildren(operation ? badge(operation.state) : el("span", "muted", "never ran"));
    byId("detail-updated").textContent = operation
      ? "Updated " + clock(operation.updatedAt) + " (" + ago(operation.updatedAt) + ")" : "";
  }

  function counter(label, value, bad) {
    const node = el("div", "counter" + (bad ? " bad" : ""));
    node.append(el("b", "", count(value)), el("span", "", label));
    return node;
  }

  function renderLive(index) {
    const body = byId("live-body");
    const operation = index.activeOperation || index.lastOperation;
    byId("live-title").textContent = index.activeOperation ? "Live progress" : "Last run";
    if (!operation) {
      body.replaceChildren(el("p", "muted", "No run yet. Start one to ingest this index's sources."));
      return;
    }
    const p = operation.progress;
    const running = !operation.completedAt;
    const docsPerSecond = rate(operation);
    const head = el("div", "live-line");
    head.append(
      el("span", "", p.processedDocuments.toLocaleString() + " of " + p.discoveredDocuments.toLocaleString() +
        " documents (" + percent(p) + "%)"),
      el("span", "muted", (running ? "running for " : "took ") + duration(operation.durationMilliseconds) +
        " · " + rateText(docsPerSecond) + " documents/s"),
    );
    const bar = el("div", "bar" + (running ? "" : operation.state === "completed" ? " done" : " partial"));
    const fill = el("span");
    fill.style.width = percent(p) + "%";
    bar.appendChild(fill);
    const foot = el("div", "live-line");
    let remaining = "";
    if (running && docsPerSecond && p.discoveredDocuments > p.processedDocuments) {
      remaining = "about " + duration((1000 * (p.discoveredDocuments - p.processedDocuments)) / docsPerSecond) + " left";
    }
    foot.append(
      el("span", "muted", "Started " + when(operation.startedAt) + " · " + words(operation.reason) +
        " · operation " + operation.operationId.slice(0, 8)),
      el("span", "muted", (remaining ? remaining + " · " : "") + "updated " + clock(operation.updatedAt) +
        " (" + ago(operation.updatedAt) + ")"),
    );
    const counters = el("div", "counters");
    counters.append(
      counter("discovered", p.discoveredDocuments), counter("processed", p.processedDocuments),
      counter("added", p.addedDocuments), counter("updated", p.updatedDocuments),
      counter("skipped", p.skippedDocuments), counter("deleted", p.deletedDocuments),
      counter("failed", p.failedDocuments, p.failedDocuments > 0), counter("chunks", p.producedChunks),
      counter("embeddings", p.producedEmbeddings), counter("embedding calls", p.embeddingCalls),
      counter("files skipped (no loader)", p.skippedFiles),
    );
    body.replaceChildren(head, bar, foot, counters);
  }

  function renderTiles(index, store) {
    const last = index.lastOperation;
    const current = index.activeOperation || last;
    if (store) {
      setTile("documents", store.documentCount === null ? "–"
        : count(store.documentCount) + (store.documentCountExact ? "" : "+"), "stored in the index");
      setTile("chunks", count(store.chunkCount), store.chunkCount === null ? "the store could not count" : "searchable");
      setTile("store", badge(store.healthy ? "healthy" : "unhealthy"),
        store.healthy ? index.configuration.vectorStoreType : words(store.reason));
    }
    if (last) {
      setTile("last", badge(last.state), when(last.completedAt) + " · " + ago(last.completedAt));
    } else {
      setTile("last", "–", "never ran");
    }
    if (current) {
      const chunksPerSecond = current.durationMilliseconds > 0
        ? current.progress.producedChunks / (current.durationMilliseconds / 1000) : null;
      setTile("rate", rateText(rate(current)) + " docs/s", rateText(chunksPerSecond) + " chunks/s · " +
        (index.activeOperation ? "this run" : "last run"));
    } else {
      setTile("rate", "–", "");
    }
  }

  function renderConfig(index) {
    const c = index.configuration;
    const pairs = [
      ["Strategy", words(c.ingestionStrategy) + (c.scheduleExpression ? " · " + c.scheduleExpression +
        (c.scheduleTimeZone ? " (" + c.scheduleTimeZone + ")" : "") : "")],
      ["Vector store", c.vectorStoreReference + " (" + c.vectorStoreType + ")"],
      ["Embedding", c.embeddingReference ? c.embeddingReference + " (" + c.embeddingType + ")" : "none (lexical only)"],
      ["Batching", c.embeddingReference ? c.embeddingBatchSize + " texts a call, " + c.embeddingConcurrency +
        " in flight" + (c.embeddingTimeoutSeconds ? ", " + c.embeddingTimeoutSeconds + " s timeout" : "") : "–"],
      ["Reranker", c.rerankerReference || "none"],
      ["Metric", c.metric],
      ["Default mode", c.defaultRetrievalMode],
      ["Chunks", c.chunkSize.toLocaleString() + " characters, " + c.chunkOverlap.toLocaleString() + " overlap"],
    ];
    const list = byId("config-list");
    list.replaceChildren();
    for (const [term, value] of pairs) list.append(el("dt", "", term), el("dd", "", value));
    const sources = byId("source-list");
    sources.replaceChildren();
    for (const source of index.sources) {
      const item = el("li");
      item.append(el("span", "", source.type + " "), el("span", "mono muted", source.displayValue));
      item.title = source.identity;
      sources.appendChild(item);
    }
    if (index.sources.length === 0) sources.appendChild(el("li", "muted", "no sources"));
    const mode = byId("query-mode");
    mode.options[0].textContent = "Default (" + c.defaultRetrievalMode + ")";
  }

  function renderRuns(problem) {
    const body = byId("run-rows");
    if (state.runs.length === 0) {
      const row = el("tr");
      const td = el("td", "muted", problem || "No runs recorded yet.");
      td.colSpan = 11;
      row.appendChild(td);
      body.replaceChildren(row);
      return;
    }
    body.replaceChildren(...state.runs.map((run) => {
      const p = run.progress;
      const row = el("tr");
      row.dataset.run = run.operationId;
      row.tabIndex = 0;
      row.classList.toggle("selected", run.operationId === state.selectedRun);
      const stateCell = el("td");
      stateCell.appendChild(badge(run.state));
      stateCell.appendChild(el("div", "muted", words(run.reason)));
      row.append(
        stateCell,
        el("td", "nowrap", when(run.startedAt)),
        el("td", "num", duration(run.durationMilliseconds)),
        el("td", "num", count(p.discoveredDocuments)),
        el("td", "num", count(p.addedDocuments)),
        el("td", "num", count(p.updatedDocuments)),
        el("td", "num", count(p.skippedDocuments)),
        el("td", "num", count(p.deletedDocuments)),
        el("td", "num" + (p.failedDocuments ? " bad" : ""), count(p.failedDocuments)),
        el("td", "num", count(p.producedChunks)),
        el("td", "num", rateText(rate(run))),
      );
      row.addEventListener("click", () => selectRun(run.operationId));
      row.addEventListener("keydown", (event) => { if (event.key === "Enter") selectRun(run.operationId); });
      return row;
    }));
  }

  function renderFailures(run, failures) {
    const summary = byId("failures-summary");
    const table = byId("failures-table");
    const rows = byId("failure-rows");
    byId("failures-title").textContent = "Failed documents";
    if (!run) {
      summary.textContent = "Select a run in the history.";
      table.hidden = true;
      return;
    }
    const label = "Run of " + when(run.startedAt) + " (" + words(run.state) + ")";
    if (run.progress.failedDocuments === 0) {
      summary.textContent = label + ": no document failed.";
      table.hidden = true;
      return;
    }
    if (!failures) {
      summary.textContent = label + ": loading…";
      return;
    }
    summary.textContent = label + ": " + failures.failedDocuments.toLocaleString() + " failed" +
      (failures.truncated ? ", the first " + failures.failures.length.toLocaleString() + " listed." : ".") +
      (failures.failures.some((f) => f.documentId) ? "" : " Document ids are shown to keys with the query role.");
    rows.replaceChildren(...failures.failures.map((failure) => {
      const row = el("tr");
      const documentCell = el("td", "mono");
      documentCell.textContent = failure.documentId ||
        (failure.documentIdentity ? "Document " + failure.documentIdentity : "(the run)");
      if (failure.documentIdentity) documentCell.title = "identity hash " + failure.documentIdentity;
      const codeCell = el("td");
      codeCell.appendChild(badge(failure.code, "code"));
      row.append(documentCell, codeCell, el("td", "", failure.sourceType || ""), el("td", "", when(failure.timestamp)));
      return row;
    }));
    table.hidden = false;
  }

  function renderDetail() {
    const index = selectedIndex();
    byId("detail").hidden = !index;
    if (!index) return;
    renderHead(index);
    renderLive(index);
    renderTiles(index, null);
    renderConfig(index);
    byId("playground").hidden = !state.roles.has("query");
  }

  async function refreshRuns(index, force) {
    const current = index.activeOperation || index.lastOperation;
    const key = current ? current.operationId + ":" + current.state : "";
    const stale = Date.now() - state.runsFetchedAt > IDLE_POLL_MS;
    const changed = force || key !== state.runsKey || stale;
    if (!changed && !index.activeOperation) return;
    // Runs follow an active run at every poll; the store (counting documents pages through ids) is
    // asked only when the run changes state, or every 15 s.
    const [runs, store] = await Promise.all([
      getJson(indexUrl(index.name, "/runs?limit=" + RUNS_SHOWN)),
      changed ? getJson(indexUrl(index.name, "/store")) : Promise.resolve({ ok: false, skipped: true }),
    ]);
    if (index.name !== state.selected) return; // the user moved on meanwhile
    state.runsKey = key;
    if (changed) state.runsFetchedAt = Date.now();
    if (!runs.ok) {
      state.runs = [];
      renderRuns(await problemText(runs.response));
      renderTiles(index, store.ok ? store.body : null);
      return;
    }
    state.runs = runs.body;
    if (!state.runs.some((run) => run.operationId === state.selectedRun)) {
      const withFailures = state.runs.find((run) => run.progress.failedDocuments > 0);
      state.selectedRun = state.runs.length ? (withFailures || state.runs[0]).operationId : null;
    }
    renderRuns();
    if (store.ok) renderTiles(index, store.body);
    await refreshFailures(index);
  }

  async function refreshFailures(index) {
    const run = state.runs.find((candidate) => candidate.operationId === state.selectedRun) || null;
    const key = run ? run.operationId + ":" + run.state + ":" + run.progress.failedDocuments : "";
    if (!run || run.progress.failedDocuments === 0) {
      state.failuresKey = key;
      renderFailures(run, null);
      return;
    }
    if (key === state.failuresKey) return;
    renderFailures(run, null);
    const failures = await getJson(indexUrl(index.name, "/runs/" + encodeURIComponent(run.operationId) + "/failures"));
    if (index.name !== state.selected || run.operationId !== state.selectedRun) return;
    if (failures.ok) {
      state.failuresKey = key;
      renderFailures(run, failures.body);
    } else {
      byId("failures-summary").textContent = await problemText(failures.response);
    }
  }

  function selectRun(operationId) {
    state.selectedRun = operationId;
    state.failuresKey = "";
    renderRuns();
    const index = selectedIndex();
    if (index) refreshFailures(index);
  }

  async function select(name) {
    if (name === state.selected) return;
    state.selected = name;
    state.runs = [];
    state.runsKey = "";
    state.selectedRun = null;
    state.failuresKey = "";
    history.replaceState(null, "", "#" + encodeURIComponent(name));
    byId("hits").replaceChildren(el("p", "muted", "Hits appear here."));
    byId("query-message").textContent = "";
    renderTable(state.indexes);
    renderDetail();
    renderRuns();
    renderFailures(null, null);
    await getJson(indexUrl(name)); // seeds the status from the store's run history after a restart
    await refresh(true);
  }

  // ---- polling and commands ------------------------------------------------------------------
  async function refresh(forceRuns) {
    clearTimeout(timer);
    try {
      const listed = await getJson(API);
      if (!listed.ok) {
        showMessage(await problemText(listed.response), true);
      } else {
        state.indexes = listed.body;
        anyActive = state.indexes.some((index) => index.activeOperation);
        if (!selectedIndex() && state.indexes.length) {
          const wanted = decodeURIComponent(location.hash.slice(1));
          state.selected = state.indexes.some((index) => index.name === wanted) ? wanted : state.indexes[0].name;
          forceRuns = true;
        }
        renderTable(state.indexes);
        renderDetail();
        const index = selectedIndex();
        if (index) await refreshRuns(index, forceRuns === true);
      }
    } catch (_) {
      showMessage(UNREACHABLE, true);
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
    renderTable(state.indexes);
    try {
      const response = await fetch(indexUrl(name, "/ingestion/" + action), {
        method: "POST",
        headers: { Accept: "application/json" },
        credentials: "same-origin",
      });
      if (response.ok) {
        const operation = await response.json();
        showMessage((action === "start" ? "Started" : "Cancelled") + " ingestion of " + name +
          " (" + words(operation.state) + ").", false);
      } else {
        showMessage(await problemText(response), true);
      }
    } catch (_) {
      showMessage(UNREACHABLE, true);
    } finally {
      busy.delete(name);
    }
    await refresh(true);
  }

  async function loadRoles() {
    try {
      const access = await getJson("api/access");
      if (access.ok) state.roles = new Set(access.body.roles);
    } catch (_) { /* the index list reports the failure */ }
    const holder = byId("roles");
    holder.replaceChildren(el("span", "", "Your access:"));
    for (const role of state.roles) holder.appendChild(el("span", "role", role));
  }

  // ---- the query playground ------------------------------------------------------------------
  function parseFilters(text) {
    const filters = {};
    for (const raw of text.split("\n")) {
      const line = raw.trim();
      if (!line) continue;
      const at = line.indexOf("=");
      if (at <= 0) throw new Error("Filters are key=value, one a line.");
      const key = line.slice(0, at).trim();
      const value = line.slice(at + 1).trim();
      // Like runiq query --filter: a JSON number or boolean is one, anything else is a string.
      let parsed = value;
      if (/^(true|false)$/.test(value) || /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(value)) parsed = JSON.parse(value);
      filters[key] = parsed;
    }
    return Object.keys(filters).length ? filters : null;
  }

  function sourceScore(label, source) {
    const node = el("span", "score");
    if (!source) {
      node.append(el("span", "muted", label + ": not found"));
      return node;
    }
    node.append(el("span", "muted", label + " "), el("b", "", "#" + source.rank), el("span", "", " · " +
      score(source.raw_score) + " " + source.metric));
    return node;
  }

  function renderHit(hit) {
    const card = el("article", "hit");
    card.dataset.rank = String(hit.rank);
    card.appendChild(el("div", "hit-rank", "#" + hit.rank));
    const head = el("div", "hit-head");
    head.append(el("span", "mono", hit.document_id), el("span", "muted mono", "chunk " + hit.chunk_id));
    const scores = el("div", "hit-scores");
    const relevance = el("span", "score");
    const meter = el("span", "relevance");
    const fill = el("span");
    fill.style.width = (typeof hit.relevance === "number" ? Math.round(hit.relevance * 100) : 0) + "%";
    meter.appendChild(fill);
    relevance.append(el("span", "muted", "relevance "), meter, el("b", "", score(hit.relevance, 3)));
    scores.appendChild(relevance);
    if (hit.raw_score !== null) {
      scores.appendChild(el("span", "score", "raw " + score(hit.raw_score) + " " + hit.metric +
        (hit.higher_is_better ? " (higher is better)" : " (lower is better)")));
    }
    const provenance = hit.provenance || {};
    const sources = el("div", "hit-scores provenance");
    sources.append(sourceScore("semantic", provenance.semantic), sourceScore("lexical", provenance.lexical));
    if (provenance.fused_score !== null && provenance.fused_score !== undefined) {
      const fused = el("span", "score");
      fused.append(el("span", "muted", "fused "), el("b", "", "#" + provenance.fused_rank),
        el("span", "", " · RRF " + score(provenance.fused_score)));
      sources.appendChild(fused);
    }
    card.append(head, scores, sources, el("div"), el("pre", "hit-content", hit.content));
    return card;
  }

  async function runQuery(event) {
    event.preventDefault();
    const index = selectedIndex();
    const message = byId("query-message");
    const hits = byId("hits");
    if (!index) return;
    const text = byId("query-text").value;
    const topK = Number(byId("query-top-k").value);
    message.className = "query-message";
    if (!text.trim()) {
      message.textContent = "Enter a query.";
      return;
    }
    const body = { text, top_k: Number.isInteger(topK) ? topK : 5 };
    const mode = byId("query-mode").value;
    if (mode) body.mode = mode;
    try {
      const filters = parseFilters(byId("query-filters").value);
      if (filters) body.filters = filters;
    } catch (error) {
      message.className = "query-message error";
      message.textContent = error.message;
      return;
    }
    const submit = byId("query-submit");
    submit.disabled = true;
    message.textContent = "Searching " + index.name + "…";
    const started = performance.now();
    try {
      const response = await fetch(indexUrl(index.name, "/query"), {
        method: "POST",
        headers: { Accept: "application/json", "Content-Type": "application/json" },
        credentials: "same-origin",
        body: JSON.stringify(body),
      });
      if (!response.ok) {
        message.className = "query-message error";
        message.textContent = response.status === 429
          ? "Too many queries; try again in " + (response.headers.get("Retry-After") || "a few") + " s."
          : await problemText(response);
        return;
      }
      const answer = await response.json();
      const elapsed = Math.round(performance.now() - started);
      message.textContent = answer.hits.length + (answer.hits.length === 1 ? " hit" : " hits") + " · " +
        answer.mode + " · " + elapsed + " ms";
      hits.replaceChildren(...(answer.hits.length ? answer.hits.map(renderHit)
        : [el("p", "muted", "No chunk matched.")]));
    } catch (_) {
      message.className = "query-message error";
      message.textContent = UNREACHABLE;
    } finally {
      submit.disabled = false;
    }
  }

  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) refresh();
  });
  document.addEventListener("DOMContentLoaded", async () => {
    byId("query-form").addEventListener("submit", runQuery);
    await loadRoles();
    await refresh(true);
  });
})();
