// The RockStream console's only script: the SQL box (POST /console/api/sql)
// and, on a view's page, its live changes (server-sent events from
// /console/api/subscribe). No build step: this file is served as written.
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

function renderError(err) {
  const box = el("div", { class: "error" });
  const head = el("div", {});
  if (err.code) head.append(el("b", { class: "rs-code" }, err.code), " ");
  head.append(err.message);
  if (err.sqlstate) head.append(" ", el("span", { class: "muted" }, "SQLSTATE " + err.sqlstate));
  box.append(head);
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

// refreshObjects reloads the overview's object lists in place.
async function refreshObjects() {
  const objects = document.getElementById("objects");
  if (!objects) return;
  const resp = await fetch(location.href, { headers: { Accept: "text/html" } });
  const doc = new DOMParser().parseFromString(await resp.text(), "text/html");
  const fresh = doc.getElementById("objects");
  if (fresh) objects.replaceWith(fresh);
  wireRefresh();
}

function wireRefresh() {
  const link = document.getElementById("refresh");
  if (link) link.addEventListener("click", (e) => { e.preventDefault(); refreshObjects(); });
}

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
      body: JSON.stringify({ sql: input.value, db: section.dataset.db }),
    });
    body = await resp.json();
  } catch (e) {
    body = { results: [], error: { message: "request failed: " + e } };
  }
  for (const n of body.notices || []) output.append(el("div", { class: "notice" }, (n.severity || "NOTICE") + ": " + n.message));
  for (const r of body.results || []) output.append(renderResult(r));
  if (body.error) output.append(renderError(body.error));
  status.textContent = body.error ? "failed" : "done";
  output.dataset.state = body.error ? "error" : "ok";
  button.disabled = false;
  refreshObjects();
  if (typeof refreshView === "function") refreshView();
}

function wireSQL() {
  const section = document.getElementById("sql");
  if (!section) return;
  document.getElementById("sql-form").addEventListener("submit", (e) => { e.preventDefault(); runSQL(section); });
  document.getElementById("sql-input").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); runSQL(section); }
  });
}

document.addEventListener("DOMContentLoaded", () => {
  wireSQL();
  wireRefresh();
  if (typeof wireView === "function") wireView();
});
