// The RockStream console's only script: the SQL box (POST /console/api/sql),
// the parts kept current (the progress of long work, a view's dataflow
// numbers: /console/part/...) and, on a view's page, its live changes
// (server-sent events from /console/api/subscribe). No build step: this
// file is served as written.
"use strict";

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
}

// cell renders a text-format value; NULL shows as a dimmed NULL.
function cell(tag, v) {
  return v === null ? el(tag, { class: "null" }, "NULL") : el(tag, {}, v);
}

// caretAt shows the line of sql holding character position (1-based, in
// characters, as PostgreSQL counts) with a caret under it.
function caretAt(sql, position) {
  const chars = Array.from(sql);
  let start = position - 1, end = position - 1;
  while (start > 0 && chars[start - 1] !== "\n") start--;
  while (end < chars.length && chars[end] !== "\n") end++;
  const line = chars.slice(start, end).join("");
  return el("pre", { class: "caret" }, line + "\n" + " ".repeat(position - 1 - start) + "^");
}

function renderError(err, sql) {
  const box = el("div", { class: "error" });
  const head = el("div", {});
  if (err.code) head.append(el("b", { class: "rs-code" }, err.code), " ");
  head.append(err.message);
  if (err.sqlstate) head.append(" ", el("span", { class: "muted" }, "SQLSTATE " + err.sqlstate));
  box.append(head);
  if (sql && err.position > 0 && err.position <= Array.from(sql).length + 1) box.append(caretAt(sql, err.position));
  if (err.detail) box.append(el("div", { class: "detail" }, err.detail));
  if (err.hint) box.append(el("div", { class: "hint" }, "Hint: " + err.hint));
  return box;
}

function renderResult(res) {
  const wrap = el("div", { class: "result" });
  if (res.columns.length > 0) {
    const head = el("tr", {}, ...res.columns.map((c) => el("th", {}, c)));
    const body = el("tbody", {}, ...res.rows.map((r) => el("tr", {}, ...r.map((v) => cell("td", v)))));
    wrap.append(el("table", { class: "result-table" }, el("thead", {}, head), body));
  }
  let tag = res.tag;
  if (res.truncated) tag += " (only the first " + res.rows.length + " rows are shown)";
  wrap.append(el("div", { class: "tag muted" }, tag));
  return wrap;
}

// refreshObjects reloads the page's status parts (elements marked
// data-refresh: the object lists, a view's status line) in place.
// NB: one reload at a time; a reload asked for during one runs after it,
// so that what a statement just changed is never missed.
let refreshing = false, refreshAgain = false;
async function refreshObjects() {
  const stale = document.querySelectorAll("[data-refresh]");
  if (stale.length === 0) return;
  if (refreshing) { refreshAgain = true; return; }
  refreshing = true;
  try {
    const resp = await fetch(location.href, { headers: { Accept: "text/html" } });
    const doc = new DOMParser().parseFromString(await resp.text(), "text/html");
    for (const old of document.querySelectorAll("[data-refresh]")) {
      const fresh = old.id && doc.getElementById(old.id);
      if (fresh) old.replaceWith(fresh);
    }
  } finally {
    refreshing = false;
  }
  wireRefresh();
  if (refreshAgain) { refreshAgain = false; refreshObjects(); }
}

// autoRefreshMillis is how often a visible page reloads its status parts,
// so lag and states stay current. Each reload counts every table's rows,
// hence not more often.
const autoRefreshMillis = 10000;

function wireRefresh() {
  const link = document.getElementById("refresh");
  if (link) link.addEventListener("click", (e) => { e.preventDefault(); refreshObjects(); });
}

// sessionKey names the tab's session token in sessionStorage: the SQL box
// keeps one session per tab, so SET and BEGIN carry over between runs.
const sessionKey = "rockstream-console-session";

async function runSQL(section) {
  const input = document.getElementById("sql-input");
  const output = document.getElementById("sql-output");
  const status = document.getElementById("sql-status");
  const button = document.getElementById("sql-run");
  button.disabled = true;
  status.textContent = "running…";
  output.replaceChildren();
  let body;
  try {
    const resp = await fetch("/console/api/sql", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ sql: input.value, db: section.dataset.db, session: sessionStorage.getItem(sessionKey) || "", keep_session: true }),
    });
    body = await resp.json();
  } catch (e) {
    body = { results: [], error: { message: "request failed: " + e } };
  }
  for (const n of body.notices || []) output.append(el("div", { class: "notice" }, (n.severity || "NOTICE") + ": " + n.message));
  for (const r of body.results || []) output.append(renderResult(r));
  if (body.error) output.append(renderError(body.error, input.value));
  if (body.session) sessionStorage.setItem(sessionKey, body.session); else sessionStorage.removeItem(sessionKey);
  let note = body.error ? "failed" : "done";
  if (body.new_session) note += " · new session";
  if (body.transaction && body.transaction !== "idle") note += " · " + body.transaction;
  status.textContent = note;
  output.dataset.state = body.error ? "error" : "ok";
  button.disabled = false;
  refreshObjects();
}

function wireSQL() {
  const section = document.getElementById("sql");
  if (!section) return;
  document.getElementById("sql-form").addEventListener("submit", (e) => { e.preventDefault(); runSQL(section); });
  document.getElementById("sql-input").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); runSQL(section); }
  });
}

// pollPart keeps the part with this id current: the element (marked
// data-poll, the URL of the part alone) is replaced by the one the URL
// answers, every data-poll-millis while the page is visible. A progress
// part that empties (the work ended) reloads the status parts too, so a
// filled view shows running at once.
async function pollPart(id) {
  const old = document.getElementById(id);
  if (!old) return;
  const millis = Number(old.dataset.pollMillis) || 2000;
  if (!document.hidden) {
    try {
      const resp = await fetch(old.dataset.poll, { headers: { Accept: "text/html" } });
      const doc = new DOMParser().parseFromString(await resp.text(), "text/html");
      const fresh = doc.getElementById(id);
      const current = document.getElementById(id);
      if (fresh && current) {
        const ended = current.dataset.lines > 0 && fresh.dataset.lines === "0";
        current.replaceWith(fresh);
        if (ended) { refreshObjects(); document.dispatchEvent(new Event("rockstream-work-ended")); }
      }
    } catch (e) {
      // NB: the server may be restarting; the next poll tries again.
    }
  }
  setTimeout(() => pollPart(id), millis);
}

function wirePolls() {
  for (const part of document.querySelectorAll("[data-poll]")) {
    if (part.id) setTimeout(() => pollPart(part.id), Number(part.dataset.pollMillis) || 2000);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  wireSQL();
  wireRefresh();
  wirePolls();
  setInterval(() => { if (!document.hidden) refreshObjects(); }, autoRefreshMillis);
  wireView();
});

// The view page's live changes: SUBSCRIBE over server-sent events. The
// first changes are the snapshot; "Rows now" applies every change to it.
const changesShownMax = 200; // older change rows are dropped from the log
const contentsShownMax = 500; // rows now beyond this are counted, not shown

function wireView() {
  const live = document.getElementById("live");
  if (!live) return;
  subscribeLive(live);
  // NB: a view being filled cannot be subscribed to yet; its page
  // subscribes again once the fill has ended.
  document.addEventListener("rockstream-work-ended", () => {
    if (live.dataset.state === "failed") subscribeLive(live);
  });
}

function subscribeLive(live) {
  const status = document.getElementById("live-status");
  const contents = document.getElementById("contents");
  const changes = document.getElementById("changes");
  let rows = new Map(); // JSON of a row → its multiplicity
  let columns = [];
  const query = "view=" + encodeURIComponent(live.dataset.view) + "&db=" + encodeURIComponent(live.dataset.db);
  live.dataset.state = "connecting";
  status.textContent = "connecting…";
  const source = new EventSource("/console/api/subscribe?" + query);

  function drawContents() {
    const body = el("tbody", {});
    let total = 0;
    // NB: sorted, so a row keeps its place when an update retracts and
    // re-inserts rows around it.
    for (const key of [...rows.keys()].sort()) {
      const n = rows.get(key);
      for (let i = 0; i < n; i++) {
        total++;
        if (total <= contentsShownMax) body.append(el("tr", {}, ...JSON.parse(key).map((v) => cell("td", v))));
      }
    }
    contents.tBodies[0].replaceWith(body);
    document.getElementById("contents-count").textContent = "(" + total + ")";
  }

  source.addEventListener("columns", (e) => {
    columns = JSON.parse(e.data).columns;
    rows = new Map();
    contents.tHead.replaceChildren(el("tr", {}, ...columns.map((c) => el("th", {}, c))));
    changes.tHead.replaceChildren(el("tr", {}, el("th", {}, "epoch"), el("th", {}, "diff"), ...columns.map((c) => el("th", {}, c))));
    changes.tBodies[0].replaceChildren();
    drawContents();
  });
  source.addEventListener("change", (e) => {
    const c = JSON.parse(e.data);
    const key = JSON.stringify(c.row);
    const n = (rows.get(key) || 0) + c.diff;
    if (n > 0) rows.set(key, n); else rows.delete(key);
    const diff = el("td", { class: "num " + (c.diff > 0 ? "diff-plus" : "diff-minus") }, (c.diff > 0 ? "+" : "") + c.diff);
    const tr = el("tr", { "data-epoch": c.epoch }, el("td", { class: "num" }, c.epoch), diff, ...c.row.map((v) => cell("td", v)));
    const log = changes.tBodies[0];
    log.prepend(tr);
    while (log.rows.length > changesShownMax) log.lastChild.remove();
    live.dataset.pending = "1";
  });
  source.addEventListener("progress", (e) => {
    const epoch = JSON.parse(e.data).epoch;
    if (live.dataset.pending) { drawContents(); delete live.dataset.pending; }
    live.dataset.state = "live";
    live.dataset.epoch = epoch;
    status.textContent = "live, complete through epoch " + epoch;
  });
  source.addEventListener("failure", (e) => {
    source.close();
    live.dataset.state = "failed";
    const filling = document.querySelector("#progress tr.progress-line[data-kind=backfill]");
    if (filling) status.textContent = "waiting for the view to be filled…";
    else status.replaceChildren(renderError(JSON.parse(e.data)));
  });
  source.onerror = () => {
    if (live.dataset.state !== "failed") { live.dataset.state = "connecting"; status.textContent = "reconnecting…"; }
  };
}
