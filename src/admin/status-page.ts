import { STATUS_PAGE_SCRIPT } from "./status-script.js";

export { STATUS_PAGE_SCRIPT };

/**
 * The status page: counts per upstream, tasks in flight with progress bars and a cancel button,
 * and the tasks that ended recently, refreshed every 2 s by its script (status-script.ts) from
 * GET /api/overview. One self-contained page: no external assets, served under a strict
 * Content-Security-Policy (routes.ts). The token comes from the URL fragment
 * (`/status#token=…`: a fragment never reaches the server or its logs) or the form, and is kept
 * in sessionStorage for the tab only.
 */
export const STATUS_PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>taskgate · status</title>
<style>
  :root { --fg: #1d2330; --muted: #6b7385; --line: #e3e6ec; --bg: #f5f6f9; --card: #fff;
    --working: #2563eb; --input: #d97706; --completed: #15803d; --failed: #c2410c; --cancelled: #6b7280; }
  * { box-sizing: border-box; }
  body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: var(--fg); background: var(--bg); }
  header { display: flex; align-items: baseline; gap: 1em; padding: 14px 28px; background: #1d2330; color: #fff; }
  header h1 { font-size: 18px; margin: 0; font-weight: 600; letter-spacing: .02em; }
  header h1 span { color: #9aa4b8; font-weight: 400; }
  #state { margin-left: auto; color: #c8cfdc; font-size: 13px; }
  main { padding: 20px 28px 40px; max-width: 1400px; }
  #error { color: var(--failed); font-weight: 600; }
  #error:empty { display: none; }
  form#login { background: var(--card); border: 1px solid var(--line); padding: 12px 16px; border-radius: 8px; margin-bottom: 16px; }
  .cards { display: grid; grid-template-columns: repeat(5, minmax(120px, 1fr)); gap: 12px; margin-bottom: 20px; }
  .card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; border-top: 4px solid var(--c); }
  .card b { display: block; font-size: 26px; font-weight: 600; color: var(--c); font-variant-numeric: tabular-nums; }
  .card small { color: var(--muted); }
  section { background: var(--card); border: 1px solid var(--line); border-radius: 8px; margin-bottom: 20px; overflow: hidden; }
  section h2 { font-size: 15px; margin: 0; padding: 10px 14px; border-bottom: 1px solid var(--line); font-weight: 600; }
  section h2 small { color: var(--muted); font-weight: 400; margin-left: .5em; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: 7px 14px; border-bottom: 1px solid var(--line); vertical-align: middle; }
  th { font-size: 12px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); font-weight: 600; background: #fafbfc; }
  tr:last-child td { border-bottom: 0; }
  td.num { text-align: right; font-variant-numeric: tabular-nums; }
  th.num { text-align: right; }
  td.zero { color: #c3c8d2; }
  .id { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; color: var(--muted); }
  .tool { font-weight: 600; }
  .badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; color: #fff; background: var(--c); white-space: nowrap; }
  .working { --c: var(--working); } .input_required { --c: var(--input); } .completed { --c: var(--completed); }
  .failed { --c: var(--failed); } .cancelled { --c: var(--cancelled); }
  tr.asking td { background: #fff7e6; }
  tr.asking td:first-child { box-shadow: inset 4px 0 var(--input); }
  .bar { height: 8px; background: #e8ebf1; border-radius: 4px; overflow: hidden; width: 220px; max-width: 100%; margin-bottom: 3px; }
  .bar i { display: block; height: 100%; background: var(--working); border-radius: 4px; transition: width .4s; }
  .completed .bar i { background: var(--completed); }
  .msg { color: var(--muted); font-size: 13px; }
  td.error { color: var(--failed); }
  button.cancel { font: inherit; font-size: 12px; padding: 3px 10px; border-radius: 6px; border: 1px solid #d0d5dd; background: #fff; cursor: pointer; }
  button.cancel:hover { border-color: var(--failed); color: var(--failed); }
  button.cancel.confirm { background: var(--failed); border-color: var(--failed); color: #fff; }
  button.cancel:disabled { opacity: .6; cursor: default; }
  .empty td { color: var(--muted); text-align: center; padding: 18px; }
</style>
</head>
<body>
<header><h1>taskgate <span>status</span></h1><div id="state">loading…</div></header>
<main>
<form id="login" hidden><label>Admin token <input id="token" type="password" autocomplete="off"></label> <button>Show</button></form>
<p id="error"></p>
<div class="cards" id="cards"></div>
<section><h2>By upstream <small id="window"></small></h2>
<table id="counts"><thead><tr><th>upstream</th><th class="num">working</th><th class="num">input required</th><th class="num">completed</th><th class="num">failed</th><th class="num">cancelled</th></tr></thead><tbody></tbody></table></section>
<section><h2>In flight</h2>
<table id="in-flight"><thead><tr><th>task</th><th>status</th><th>progress</th><th>upstream</th><th>running for</th><th>owner</th><th></th></tr></thead><tbody></tbody></table></section>
<section><h2>Recently ended <small id="recent-window"></small></h2>
<table id="recent"><thead><tr><th>task</th><th>status</th><th>result</th><th>upstream</th><th>ended</th><th>took</th></tr></thead><tbody></tbody></table></section>
</main>
<script src="/status.js"></script>
</body>
</html>
`;
