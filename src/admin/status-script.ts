/**
 * The status page's script (status-page.ts): one GET /api/overview every 2 s, rendered with DOM
 * calls only (no markup from data), and a two-click cancel through the admin API's
 * POST /api/tasks/<id>/cancel, the same path as `taskgate tasks cancel`.
 */
export const STATUS_PAGE_SCRIPT = `"use strict";
(() => {
  const REFRESH_MS = 2000;
  const KEY = "taskgate-admin-token";
  const STATES = [["working", "working"], ["input_required", "input required"], ["completed", "completed"], ["failed", "failed"], ["cancelled", "cancelled"]];
  const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
  if (fromHash) { sessionStorage.setItem(KEY, fromHash); history.replaceState(null, "", location.pathname); }
  const $ = (id) => document.getElementById(id);
  const token = () => sessionStorage.getItem(KEY);
  $("login").addEventListener("submit", (e) => { e.preventDefault(); sessionStorage.setItem(KEY, $("token").value); $("login").hidden = true; refresh(); });

  const span = (ms) => { const s = Math.max(0, Math.round(ms / 1000)); return s < 120 ? s + " s" : s < 7200 ? Math.round(s / 60) + " min" : Math.round(s / 3600) + " h"; };
  const since = (iso) => span(Date.now() - Date.parse(iso));
  function el(tag, cls, text) { const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; }
  function cell(row, cls, ...children) { const td = row.insertCell(); if (cls) td.className = cls; for (const c of children) td.append(c); return td; }
  const badge = (status) => el("span", "badge " + status, status.replace("_", " "));
  function taskCell(row, t) { cell(row, "task", el("div", "tool", t.tool), el("div", "id", t.taskId)); }
  function progressCell(row, t) {
    const td = cell(row, "progress");
    if (t.progress) {
      const bar = el("div", "bar"); const fill = el("i"); fill.style.width = (100 * t.progress.progress / t.progress.total).toFixed(1) + "%";
      bar.append(fill); td.append(bar);
    }
    td.append(el("div", "msg text", t.statusMessage || (t.status === "input_required" ? "waiting for the client's answer" : "—")));
  }
  function emptyRow(body, columns, text) { const row = body.insertRow(); row.className = "empty"; const td = row.insertCell(); td.colSpan = columns; td.textContent = text; }

  function renderCards(counts) {
    const totals = {};
    for (const byStatus of Object.values(counts)) for (const [s, n] of Object.entries(byStatus)) totals[s] = (totals[s] || 0) + n;
    const cards = $("cards"); cards.replaceChildren();
    for (const [status, label] of STATES) {
      const card = el("div", "card " + status); card.dataset.status = status;
      card.append(el("b", "", String(totals[status] || 0)), el("small", "", label));
      cards.append(card);
    }
  }
  function renderCounts(counts) {
    const body = $("counts").tBodies[0]; body.replaceChildren();
    const upstreams = Object.keys(counts).sort();
    if (!upstreams.length) return emptyRow(body, 6, "no tasks");
    for (const upstream of upstreams) {
      const row = body.insertRow(); row.dataset.upstream = upstream;
      cell(row, "tool", upstream);
      for (const [status] of STATES) { const n = counts[upstream][status] || 0; cell(row, "num" + (n ? "" : " zero"), String(n)).dataset.status = status; }
    }
  }
  function renderInFlight(tasks) {
    const body = $("in-flight").tBodies[0]; body.replaceChildren();
    if (!tasks.length) return emptyRow(body, 7, "nothing in flight");
    for (const t of tasks) {
      const row = body.insertRow(); row.dataset.taskId = t.taskId;
      if (t.status === "input_required") row.className = "asking";
      taskCell(row, t); cell(row, "status", badge(t.status)); progressCell(row, t);
      cell(row, "", t.upstream); cell(row, "", since(t.createdAt)); cell(row, "id", t.owner);
      cell(row, "", cancelButton(t));
    }
  }
  function renderRecent(tasks) {
    const body = $("recent").tBodies[0]; body.replaceChildren();
    if (!tasks.length) return emptyRow(body, 6, "nothing ended in this window");
    for (const t of tasks) {
      const row = body.insertRow(); row.dataset.taskId = t.taskId; row.className = t.status;
      taskCell(row, t); cell(row, "status", badge(t.status));
      if (t.error) cell(row, "message error", t.error); else progressCell(row, t);
      cell(row, "", t.upstream); cell(row, "", since(t.lastUpdatedAt) + " ago");
      cell(row, "", span(Date.parse(t.lastUpdatedAt) - Date.parse(t.createdAt)));
    }
  }

  const confirming = new Set();
  function cancelButton(t) {
    const button = el("button", "cancel", "Cancel");
    if (t.cancelRequested) { button.disabled = true; button.textContent = "cancelling…"; return button; }
    if (confirming.has(t.taskId)) { button.classList.add("confirm"); button.textContent = "Confirm cancel"; }
    button.addEventListener("click", () => {
      if (!confirming.has(t.taskId)) { confirming.add(t.taskId); button.classList.add("confirm"); button.textContent = "Confirm cancel"; setTimeout(() => confirming.delete(t.taskId), 5000); return; }
      confirming.delete(t.taskId); button.disabled = true; button.textContent = "cancelling…";
      void cancel(t.taskId);
    });
    return button;
  }
  async function cancel(taskId) {
    try {
      const res = await fetch("/api/tasks/" + encodeURIComponent(taskId) + "/cancel", { method: "POST", headers: { authorization: "Bearer " + token() } });
      if (!res.ok && res.status !== 409) throw new Error("HTTP " + res.status);
    } catch (err) { $("error").textContent = "could not cancel " + taskId + ": " + err.message; }
    refresh();
  }

  async function refresh() {
    if (!token()) { $("login").hidden = false; $("state").textContent = "an admin token is needed"; return; }
    try {
      const res = await fetch("/api/overview", { headers: { authorization: "Bearer " + token() } });
      if (res.status === 401) { sessionStorage.removeItem(KEY); $("login").hidden = false; $("error").textContent = "the admin token was refused"; return; }
      if (!res.ok) throw new Error("HTTP " + res.status);
      const o = await res.json();
      $("error").textContent = "";
      const period = "last " + span(o.windowMs) + (o.truncated ? " · newest tasks only" : "");
      $("window").textContent = "in flight, and ended in the " + period; $("recent-window").textContent = period;
      renderCards(o.counts); renderCounts(o.counts); renderInFlight(o.inFlight); renderRecent(o.recent);
      $("state").textContent = o.inFlight.length + " in flight · refreshed " + new Date().toLocaleTimeString();
    } catch (err) { $("error").textContent = "could not refresh: " + err.message; }
  }
  refresh();
  setInterval(refresh, REFRESH_MS);
})();
`;
