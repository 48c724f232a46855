/**
 * The status page: tasks in flight with their progress, refreshed every 2 s by its script. The
 * token comes from the URL fragment (`/status#token=…`: a fragment never reaches the server or
 * its logs) or the form, and is kept in sessionStorage for the tab only.
 */
export const STATUS_PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>taskgate · tasks in flight</title>
<style>
  body { font: 14px system-ui, sans-serif; margin: 2em; color: #222; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid #ddd; }
  td.id { font-family: monospace; }
  #state { color: #666; }
  #error { color: #b00; }
</style>
</head>
<body>
<h1>Tasks in flight</h1>
<form id="login" hidden><label>Admin token <input id="token" type="password" autocomplete="off"></label> <button>Show</button></form>
<p id="state">loading…</p>
<p id="error"></p>
<table>
  <thead><tr><th>task</th><th>status</th><th>progress</th><th>upstream</th><th>tool</th><th>running for</th><th>owner</th></tr></thead>
  <tbody id="tasks"></tbody>
</table>
<script src="/status.js"></script>
</body>
</html>
`;

export const STATUS_PAGE_SCRIPT = `"use strict";
(() => {
  const REFRESH_MS = 2000;
  const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
  if (fromHash) { sessionStorage.setItem("taskgate-admin-token", fromHash); history.replaceState(null, "", location.pathname); }
  const $ = (id) => document.getElementById(id);
  const token = () => sessionStorage.getItem("taskgate-admin-token");
  $("login").addEventListener("submit", (e) => { e.preventDefault(); sessionStorage.setItem("taskgate-admin-token", $("token").value); $("login").hidden = true; refresh(); });
  const age = (iso) => { const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000)); return s < 120 ? s + " s" : Math.round(s / 60) + " min"; };
  function cell(row, text, cls) { const td = row.insertCell(); td.textContent = text; if (cls) td.className = cls; }
  function render(tasks) {
    const body = $("tasks");
    body.replaceChildren();
    for (const t of tasks) {
      const row = body.insertRow();
      row.dataset.taskId = t.taskId;
      cell(row, t.taskId, "id"); cell(row, t.status, "status"); cell(row, t.statusMessage || "", "progress");
      cell(row, t.upstream); cell(row, t.tool); cell(row, age(t.createdAt)); cell(row, t.owner);
    }
    $("state").textContent = tasks.length + " in flight · refreshed " + new Date().toLocaleTimeString();
  }
  async function refresh() {
    if (!token()) { $("login").hidden = false; $("state").textContent = "an admin token is needed"; return; }
    try {
      const res = await fetch("/api/tasks?status=working,input_required&limit=500", { headers: { authorization: "Bearer " + token() } });
      if (res.status === 401) { sessionStorage.removeItem("taskgate-admin-token"); $("login").hidden = false; $("error").textContent = "the admin token was refused"; return; }
      if (!res.ok) throw new Error("HTTP " + res.status);
      $("error").textContent = "";
      render((await res.json()).tasks);
    } catch (err) { $("error").textContent = "could not refresh: " + err.message; }
  }
  refresh();
  setInterval(refresh, REFRESH_MS);
})();
`;
