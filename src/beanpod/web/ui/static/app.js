/* beanpod dashboard: one page, hash routes, reads /api/v1/ (docs/http-api.md). Plain
   JavaScript, no build step and no CDN. Job bodies are shown as text nodes, never HTML. */
"use strict";

const STATES = ["ready", "reserved", "delayed", "buried"];
const REFRESH_MS = 2000;
const view = document.getElementById("view");
let refreshTimer = null;
let lastValues = new Map(); // cell key -> value, to highlight what changed
let rateBase = null; // {t, totals}: the previous totals, for rates between refreshes

// ---- small helpers -------------------------------------------------------------------

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** Replace the page's content (arrays flattened, null and false skipped). */
function show(...nodes) {
  view.replaceChildren(...nodes.flat(Infinity).filter(n => n !== null && n !== undefined && n !== false));
}

function csrf() {
  const m = document.cookie.match(/(?:^|; )beanpod_csrf=([^;]*)/);
  return m ? decodeURIComponent(m[1]) : "";
}

async function api(path, body, method) {
  const opts = { headers: {} };
  if (body !== undefined || method) {
    opts.method = method || "POST";
    opts.headers["Content-Type"] = "application/json";
    opts.headers["X-CSRF-Token"] = csrf();
    opts.body = JSON.stringify(body || {});
  }
  const res = await fetch(path, opts);
  const doc = await res.json().catch(() => ({ error: res.statusText }));
  if (!res.ok) throw new Error(doc.error || `HTTP ${res.status}`);
  return doc;
}

function post(path, body) { return api(path, body || {}, "POST"); }

function enc(s) { return encodeURIComponent(s); }

/** A duration: rounded first, then the unit chosen by the rounded value (59.6 s is
    "1m 0s", like a 60 s TTR, never "60 s"). */
function ms(v) {
  if (v < 1000) return `${Math.round(v)} ms`;
  const tenths = Math.round(v / 100);
  if (tenths < 100) return `${(tenths / 10).toFixed(1)} s`;
  const s = Math.round(v / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`;
}

function num(v) { return typeof v === "number" ? v.toLocaleString("en-US") : v; }

function stateBadge(s) {
  return h("span", { class: `state ${STATES.includes(s) ? s : "other"}` }, s);
}

function cell(key, value, extra) {
  const td = h("td", { class: `num ${extra || ""}` }, num(value));
  if (lastValues.has(key) && lastValues.get(key) !== value) td.classList.add("changed");
  lastValues.set(key, value);
  return td;
}

const NUMERIC = new Set(["Ready", "Reserved", "Delayed", "Buried", "Urgent", "Total put", "Watching",
  "Waiting", "Held", "Oldest ready", "Priority", "Age", "Time left", "Reserves", "Timeouts", "Buries", "Kicks", "Size",
  "Failed jobs", "Parquet files", "Bytes", "Running", "Stalled", "Scheduled", "Depends",
  "Recurring", "Waited (count, mean)", "Ran (count, mean)", "Failed", "Retries", "Every", "Spawned"]);

function table(headers, rows, empty) {
  if (!rows.length) return h("div", { class: "empty" }, empty || "Nothing here.");
  const head = h("tr", {}, headers.map(x => h("th", { class: NUMERIC.has(x) ? "num" : "" }, x)));
  return h("table", {}, h("thead", {}, head), h("tbody", {}, rows));
}

function flash(text, isError) {
  const el = document.getElementById("flash");
  el.textContent = text;
  el.className = isError ? "error" : "";
  el.hidden = false;
  clearTimeout(flash.timer);
  flash.timer = setTimeout(() => { el.hidden = true; }, isError ? 8000 : 4000);
}

function confirmDialog(text, okLabel) {
  const modal = document.getElementById("modal");
  document.getElementById("modal-text").textContent = text;
  const ok = document.getElementById("modal-ok");
  ok.textContent = okLabel || "Confirm";
  modal.hidden = false;
  return new Promise(resolve => {
    const done = answer => { modal.hidden = true; ok.onclick = cancel.onclick = null; resolve(answer); };
    const cancel = document.getElementById("modal-cancel");
    ok.onclick = () => done(true);
    cancel.onclick = () => done(false);
  });
}

async function act(promise, message) {
  try {
    const doc = await promise;
    flash(typeof message === "function" ? message(doc) : message);
    await render(false);
    return doc;
  } catch (err) {
    flash(err.message, true);
    return null;
  }
}

/** A bulk action: dry run, show the count, run with the token on confirmation. */
async function bulk(path, body, verb) {
  try {
    const dry = await post(path, body);
    if (!dry.count) { flash(`No jobs match: nothing to ${verb}.`); return; }
    const what = dry.selection.tube ? `tube ${dry.selection.tube}` : `group ${dry.selection.group}`;
    const sure = await confirmDialog(
      `${verb} ${num(dry.count)} job${dry.count === 1 ? "" : "s"} of ${what}? This cannot be undone.`,
      `${verb} ${num(dry.count)}`);
    if (!sure) return;
    await act(post(path, { ...body, confirm: dry.confirm }),
      d => `${verb}: ${num(d.done)} job${d.done === 1 ? "" : "s"}` + (d.seconds !== undefined ? ` in ${d.seconds} s` : ""));
  } catch (err) { flash(err.message, true); }
}

// ---- pages ---------------------------------------------------------------------------

async function overview() {
  const [summary, tubes, tp] = await Promise.all(
    [api("/api/v1/summary"), api("/api/v1/tubes"), api("/api/v1/throughput")]);
  const j = summary.jobs;
  const rates = currentRates(tp.totals);
  const card = (label, value, cls, key) => {
    const v = h("div", { class: "value" }, num(value));
    if (lastValues.has(key) && lastValues.get(key) !== value) v.classList.add("changed");
    lastValues.set(key, value);
    return h("div", { class: `card ${cls || ""}` }, h("div", { class: "label" }, label), v);
  };
  const rows = tubes.tubes.map(t => h("tr", {},
    h("td", {}, h("a", { href: `#/tube/${enc(t.name)}` }, t.name)),
    ...STATES.map(s => cell(`t:${t.name}:${s}`, t[s], s === "buried" && t.buried ? "alert" : "")),
    cell(`t:${t.name}:held`, t.held), cell(`t:${t.name}:urgent`, t.urgent),
    h("td", { class: "num" }, t.head_age_ms ? ms(t.head_age_ms) : ""), cell(`t:${t.name}:total`, t.total_jobs),
    cell(`t:${t.name}:watching`, t.watching), cell(`t:${t.name}:waiting`, t.waiting),
    h("td", {}, t.paused ? `paused, ${ms(t.pause_left_ms)} left` : "")));
  const canvas = h("canvas", { width: 1200, height: 220, id: "chart" });
  show(
    h("h1", {}, "Overview"),
    summary.draining ? h("p", { class: "alert" }, "Draining: new jobs are refused (SIGUSR1).") : null,
    h("div", { class: "cards" },
      card("Ready", j.ready, "ready", "c:ready"), card("Reserved", j.reserved, "reserved", "c:reserved"),
      card("Delayed", j.delayed, "delayed", "c:delayed"), card("Buried", j.buried, "buried", "c:buried"),
      card("Urgent", j.urgent, "", "c:urgent"), card("Tubes", summary.tubes, "", "c:tubes"),
      card("Puts / s", rates.put, "", "r:put"), card("Reserves / s", rates.reserve, "", "r:reserve"),
      card("Deletes / s", rates.delete, "", "r:delete")),
    h("h2", {}, "Throughput, last hour"),
    h("div", { class: "legend muted" },
      ...SERIES.map(([name, color]) => h("span", {}, h("i", { style: `background:${color}` }), `${name} / s`)),
      h("span", {}, `one point every ${tp.interval_s} s; puts from every dialect, reserves and deletes are beanstalkd commands`)),
    canvas,
    h("h2", {}, `Tubes (${tubes.tubes.length})`),
    table(["Tube", "Ready", "Reserved", "Delayed", "Buried", "Held", "Urgent", "Oldest ready",
           "Total put", "Watching", "Waiting", "Paused"], rows, "No tubes."),
    h("p", { class: "muted" }, "Held: qless jobs waiting on dependencies, completed jobs kept for "
      + "their history, recurring templates and finished Workq jobs. Oldest ready: how long the "
      + "job a reserve would get next has waited."));
  drawChart(canvas, tp);
}

const SERIES = [["put", "#1f7a3a"], ["reserve", "#1d5fa8"], ["delete", "#b3261e"]];

function currentRates(totals) {
  const now = Date.now();
  let rates = { put: 0, reserve: 0, delete: 0 };
  if (rateBase && now > rateBase.t) {
    const dt = (now - rateBase.t) / 1000;
    for (const k of Object.keys(rates)) rates[k] = Math.max(0, Math.round((totals[k] - rateBase.totals[k]) / dt));
  }
  rateBase = { t: now, totals };
  return rates;
}

function drawChart(canvas, tp) {
  const ctx = canvas.getContext("2d");
  const W = canvas.width, H = canvas.height, L = 60, B = 24, T = 10;
  ctx.clearRect(0, 0, W, H);
  ctx.font = "12px system-ui, sans-serif";
  ctx.fillStyle = "#69707a";
  const pts = tp.points;
  if (pts.length < 2) {
    ctx.fillText(`Collecting: the chart fills in as samples arrive (every ${tp.interval_s} s).`, L, H / 2);
    return;
  }
  const t0 = pts[0][0], t1 = pts[pts.length - 1][0];
  const top = Math.max(1, ...pts.flatMap(p => p.slice(1)));
  const x = t => L + (W - L - 10) * (t - t0) / Math.max(1, t1 - t0);
  const y = v => H - B - (H - B - T) * v / top;
  ctx.strokeStyle = "#dfe3e8";
  for (let i = 0; i <= 4; i++) {
    const v = top * i / 4;
    ctx.beginPath(); ctx.moveTo(L, y(v)); ctx.lineTo(W - 10, y(v)); ctx.stroke();
    ctx.fillText(v >= 100 ? Math.round(v).toLocaleString("en-US") : v.toFixed(1), 4, y(v) + 4);
  }
  ctx.fillText(new Date(t0 * 1000).toLocaleTimeString(), L, H - 6);
  ctx.fillText(new Date(t1 * 1000).toLocaleTimeString(), W - 80, H - 6);
  SERIES.forEach(([, color], i) => {
    ctx.strokeStyle = color; ctx.lineWidth = 2; ctx.setLineDash(i === 2 ? [6, 4] : []); ctx.beginPath();
    pts.forEach((p, k) => (k ? ctx.lineTo : ctx.moveTo).call(ctx, x(p[0]), y(p[i + 1])));
    ctx.stroke();
  });
  ctx.lineWidth = 1; ctx.setLineDash([]);
}

// order "": the API's default for the state (the answer's "order" says which)
const tubeState = { name: null, state: "buried", order: "", contains: "", cursors: [null],
  pauseSeconds: 60, moveTo: "" };

function resetTube(name, state) {
  if (tubeState.name !== name || (state && tubeState.asked !== state)) {
    Object.assign(tubeState, { name, state: state || "buried", asked: state, contains: "", order: "",
      cursors: [null], touched: !!state, moveTo: "" });
  }
}

function refilter(change) {
  Object.assign(tubeState, change, { cursors: [null], touched: true });
  render(false);
}

/** An input whose value survives the page's auto-refresh (kept in tubeState[key]). */
function keptInput(key, attrs) {
  const input = h("input", { ...attrs, value: tubeState[key] });
  input.addEventListener("input", () => { tubeState[key] = input.value; });
  return input;
}

async function tubePage(name, state) {
  resetTube(name, state);
  const base = `/api/v1/tubes/${enc(name)}`;
  const t = await api(base);
  if (tubeState.cursors.length === 1 && !tubeState.touched) {  // open on the state that has jobs
    tubeState.state = ["buried", "ready", "delayed", "reserved"].find(s => t[s]) || "buried";
  }
  const q = new URLSearchParams({ state: tubeState.state, limit: 50 });
  if (tubeState.order) q.set("order", tubeState.order);
  const cursor = tubeState.cursors[tubeState.cursors.length - 1];
  if (cursor) q.set("cursor", cursor);
  if (tubeState.contains) q.set("contains", tubeState.contains);
  const page = await api(`${base}/jobs?${q}`);
  show(
    h("h1", {}, "Tube ", h("code", {}, name), " ",
      t.paused ? h("span", { class: "state delayed" }, `paused, ${ms(t.pause_left_ms)} left`) : null),
    h("div", { class: "cards" }, STATES.map(s =>
      h("div", { class: `card ${s}` }, h("div", { class: "label" }, s), h("div", { class: "value" }, num(t[s])))),
      h("div", { class: "card" }, h("div", { class: "label" }, "total put"), h("div", { class: "value" }, num(t.total_jobs)))),
    pauseBar(t, base),
    h("div", { class: "tabs" }, STATES.map(s => h("button", { class: s === tubeState.state ? "active" : "",
      id: `tab-${s}`, onclick: () => refilter({ state: s, order: "" }) },
      `${s} (${num(t[s])})`))),
    bulkBar(base, page.order),
    jobTable(page.jobs, `No ${tubeState.state} jobs${tubeState.contains ? " matching the search" : ""}.`),
    pager(page.next_cursor));
}

function pauseBar(t, base) {
  if (t.paused) {
    return h("div", { class: "toolbar" }, h("button", { id: "unpause",
      onclick: () => act(post(`${base}/unpause`), `Tube ${t.name} unpaused`) }, "Unpause"));
  }
  const seconds = keptInput("pauseSeconds", { type: "number", id: "pause-seconds", min: 1, style: "width:6em" });
  return h("div", { class: "toolbar" }, h("button", { id: "pause",
    onclick: () => act(post(`${base}/pause`, { seconds: Number(seconds.value) }), `Tube ${t.name} paused`) },
    "Pause for"), seconds, h("span", { class: "muted" }, "seconds (no reserves meanwhile)"));
}

function bulkBar(base, shown) {
  const st = tubeState.state, searching = Boolean(tubeState.contains);
  const filter = { state: st, ...(searching ? { contains: tubeState.contains } : {}) };
  const search = h("input", { type: "search", id: "search", placeholder: "body contains…", value: tubeState.contains });
  search.addEventListener("change", () => refilter({ contains: search.value }));
  const order = h("select", { id: "order" },
    st === "ready" ? h("option", { value: "reserve", selected: shown === "reserve" },
      "reserve order (priority, then id)") : null,
    h("option", { value: "newest", selected: shown === "newest" }, "newest first"),
    h("option", { value: "oldest", selected: shown === "oldest" }, "oldest first"));
  order.addEventListener("change", () => refilter({ order: order.value }));
  const moveTo = keptInput("moveTo", { type: "text", id: "move-to", placeholder: "other tube", style: "width:9em" });
  const which = searching ? "matching" : `all ${st}`;
  return h("div", { class: "toolbar" }, search, order,
    ["buried", "delayed"].includes(st) ? h("button", { id: "kick-all", class: "primary",
      onclick: () => bulk(`${base}/kick`, filter, "Kick") }, `Kick ${which}…`) : null,
    st !== "reserved" ? [h("button", { id: "delete-all", class: "danger",
      onclick: () => bulk(`${base}/delete`, filter, "Delete") }, `Delete ${which}…`),
      moveTo, h("button", { id: "move-all", onclick: () => bulk(`${base}/move`, { ...filter, to: moveTo.value }, "Move") },
        `Move ${which} to tube…`)] : null);
}

function pager(next) {
  return h("div", { class: "toolbar" },
    h("button", { id: "prev", disabled: tubeState.cursors.length < 2,
      onclick: () => { tubeState.cursors.pop(); render(false); } }, "‹ Previous"),
    h("button", { id: "next", disabled: !next,
      onclick: () => { tubeState.cursors.push(next); render(false); } }, "Next ›"),
    h("span", { class: "muted" }, `page ${tubeState.cursors.length}, 50 per page`));
}

async function failuresPage() {
  const [groups, buried] = await Promise.all([
    api("/api/v1/qless/failures").catch(() => ({ groups: [] })), api("/api/v1/buried")]);
  const sections = await Promise.all(buried.tubes.map(async t => {  // qless failures: by group
    const page = await api(`/api/v1/tubes/${enc(t.name)}/jobs?state=buried&order=newest&limit=20&exclude=qless`);
    const base = `/api/v1/tubes/${enc(t.name)}`, n = t.buried, which = { state: "buried", exclude: "qless" };
    return h("section", {},
      h("h2", {}, "Tube ", h("a", { href: `#/tube/${enc(t.name)}` }, t.name), `: ${num(n)} buried`,
        n > 20 ? h("span", { class: "muted" }, " (newest 20 shown)") : null),
      h("div", { class: "toolbar" },
        h("button", { class: "primary", "data-kick-tube": t.name, onclick: () => bulk(`${base}/kick`, which, "Kick") }, `Kick all ${num(n)}…`),
        h("button", { class: "danger", onclick: () => bulk(`${base}/delete`, which, "Delete") }, `Delete all ${num(n)}…`)),
      jobTable(page.jobs));
  }));
  show(
    h("h1", {}, "Failures"),
    h("h2", {}, "qless failure groups"),
    table(["Group", "Failed jobs", ""], groups.groups.map(g => h("tr", {},
      h("td", {}, h("a", { href: `#/failures/${enc(g.group)}` }, g.group)), cell(`g:${g.group}`, g.count, "alert"),
      h("td", {}, h("button", { class: "primary", "data-retry": g.group,
        onclick: () => bulk(`/api/v1/qless/failures/${enc(g.group)}/retry`, {}, "Retry") }, "Retry all…")))),
      "No qless failures."),
    h("h2", {}, "Buried jobs, newest first"),
    sections.length ? sections : h("div", { class: "empty" }, "No buried jobs in any tube."));
}

async function failureGroupPage(group) {
  const g = await api(`/api/v1/qless/failures/${enc(group)}?limit=100`);
  show(
    h("h1", {}, "Failure group ", h("code", {}, group), `: ${num(g.total)} jobs`),
    h("div", { class: "toolbar" }, h("button", { class: "primary",
      onclick: () => bulk(`/api/v1/qless/failures/${enc(group)}/retry`, {}, "Retry") }, "Retry all…"),
      h("a", { href: "#/failures" }, "back to failures")),
    table(["jid", "Class", "Queue", "Worker", "Failed", "Error"], g.jobs.map(j => h("tr", {},
      h("td", {}, keyLink(j.jid)), h("td", {}, j.klass), h("td", {}, j.queue), h("td", {}, j.failure.worker || ""),
      h("td", {}, j.failure.when ? new Date(j.failure.when * 1000).toLocaleString() : ""),
      h("td", {}, failureBlock(j.failure.message))))));
}

async function workersPage() {
  const [summary, workers] = await Promise.all(
    [api("/api/v1/summary"), api("/api/v1/qless/workers").catch(() => ({ workers: [] }))]);
  const c = summary.clients;
  const conns = { "open connections": c.open, producers: c.producers, workers: c.workers,
    "waiting in reserve": c.waiting, "accepted since start": c.total, ...(summary.connections || {}) };
  const tubes = (await api("/api/v1/tubes")).tubes.filter(t => t.reserved > 0);
  show(
    h("h1", {}, "Workers"),
    h("h2", {}, "Connections"),
    Object.keys(conns).length
      ? h("div", { class: "cards" }, Object.entries(conns).map(([role, n]) =>
          h("div", { class: "card" }, h("div", { class: "label" }, role), h("div", { class: "value" }, num(n)))))
      : h("div", { class: "empty" }, "No connection counts reported."),
    h("h2", {}, "qless workers (most recently seen first)"),
    table(["Worker", "Running jobs", "Stalled (lock expired)"], workers.workers.map(w => h("tr", {},
      h("td", {}, h("code", {}, w.name)),
      h("td", {}, `${w.jobs}: `, keyLinks(w.job_ids)),
      h("td", { class: w.stalled ? "alert" : "" }, `${w.stalled}`, w.stalled ? [": ", keyLinks(w.stalled_ids)] : ""))),
      "No qless workers registered."),
    h("h2", {}, "Reserved jobs by tube (what beanstalkd and Workq workers hold)"),
    table(["Tube", "Reserved", "Waiting", "Watching", ""], tubes.map(t => h("tr", {},
      h("td", {}, h("a", { href: `#/tube/${enc(t.name)}` }, t.name)), cell(`w:${t.name}:reserved`, t.reserved),
      cell(`w:${t.name}:waiting`, t.waiting), cell(`w:${t.name}:watching`, t.watching),
      h("td", {}, h("a", { href: `#/tube/${enc(t.name)}/reserved` }, "show the reserved jobs")))),
      "No job is reserved right now."),
    h("p", {}, h("a", { href: "#/busy" }, "Busy: every held job with who holds it and since when")));
}

async function qlessPage() {
  const [queues, tracked, recurring] = await Promise.all([api("/api/v1/qless/queues"),
    api("/api/v1/qless/tracked"), api("/api/v1/qless/recurring")]);
  const stats = await Promise.all(queues.map(q => api(`/api/v1/qless/stats/${enc(q.name)}`)));
  const secs = v => (v ? ms(Math.round(v * 1000)) : "—");
  show(
    h("h1", {}, "qless"),
    h("h2", {}, "Queues, with today's statistics (UTC day)"),
    table(["Queue", "Waiting", "Running", "Stalled", "Scheduled", "Depends", "Recurring", "Paused",
           "Waited (count, mean)", "Ran (count, mean)", "Failed", "Retries"],
      queues.map((q, i) => h("tr", {},
        h("td", {}, h("a", { href: `#/tube/${enc(q.name)}` }, q.name)),
        ...["waiting", "running", "stalled", "scheduled", "depends", "recurring"].map(k =>
          cell(`q:${q.name}:${k}`, q[k], k === "stalled" && q[k] ? "alert" : "")),
        h("td", {}, q.paused ? "paused" : ""),
        h("td", { class: "num" }, `${num(stats[i].wait.count)}, ${secs(stats[i].wait.mean)}`),
        h("td", { class: "num" }, `${num(stats[i].run.count)}, ${secs(stats[i].run.mean)}`),
        cell(`q:${q.name}:failed`, stats[i].failed, stats[i].failed ? "alert" : ""),
        cell(`q:${q.name}:retries`, stats[i].retries))),
      "No qless queues yet."),
    h("h2", {}, "Tracked jobs"),
    table(["jid", "Class", "State", "Queue", "Worker", "Tags"], tracked.jobs.map(j => h("tr", {},
      h("td", {}, keyLink(j.jid)), h("td", {}, j.klass), h("td", {}, j.state), h("td", {}, j.queue),
      h("td", {}, j.worker || ""), h("td", {}, (j.tags || []).map(t => h("span", { class: "tag" }, t))))),
      "No tracked jobs."),
    tracked.expired.length ? h("p", { class: "muted" }, "Tracked but gone: ", keyLinks(tracked.expired)) : null,
    h("h2", {}, "Recurring templates"),
    table(["jid", "Class", "Queue", "Every", "Spawned", "Priority", "Tags"], recurring.recurring.map(r => h("tr", {},
      h("td", {}, keyLink(r.jid)), h("td", {}, r.klass), h("td", {}, r.queue),
      h("td", { class: "num" }, ms(r.interval * 1000)), h("td", { class: "num" }, num(r.count)),
      h("td", { class: "num" }, r.priority), h("td", {}, (r.tags || []).map(t => h("span", { class: "tag" }, t))))),
      "No recurring jobs."));
}

async function analyticsPage() {
  const run = await api("/api/v1/analytics");
  if (!run.enabled) {
    show(h("h1", {}, "Analytics"), h("div", { class: "empty", id: "analytics-off" },
      h("p", {}, "Not configured. Write the event log (", h("code", {}, "beanpod serve --events DIR"),
        "), build the tables and the report from it:"),
      h("pre", {}, "beanpod analyze --events DIR --out OUT"),
      h("p", {}, "then start the server with ", h("code", {}, "--analytics OUT"),
        " (for example ", h("code", {}, "beanpod serve --events DIR --analytics OUT"),
        ") to show them here. See docs/analytics.md.")));
    return;
  }
  show(
    h("h1", {}, "Analytics"),
    h("p", { class: "muted" }, `beanpod analyze output in ${run.dir}`,
      run.generated ? `, written ${new Date(run.generated * 1000).toLocaleString()}` : ""),
    run.tables.length ? table(["Table", "Parquet files", "Bytes"], run.tables.map(t => h("tr", {},
      h("td", {}, t.name), h("td", { class: "num" }, t.files), h("td", { class: "num" }, num(t.bytes))))) : null,
    run.report ? h("iframe", { src: "/analytics/report.html", title: "analytics report" }) : analyzeHint(run));
}

/** No report (or no tables) in the --analytics directory: why, and the command that writes them. */
function analyzeHint(run) {
  const missing = run.tables.length ? "no report.html" : "no tables and no report.html";
  return h("div", { class: "empty", id: "analytics-empty" },
    h("p", {}, `${run.dir} holds ${missing} yet: beanpod analyze has not written there. `
      + "Build them from the event log (written by ", h("code", {}, "beanpod serve --events DIR"), "):"),
    h("pre", {}, `beanpod analyze --events DIR --out ${run.dir}`),
    h("p", {}, "then reload this page. See docs/analytics.md."));
}

// ---- routing and refresh -------------------------------------------------------------

const ROUTES = [
  [/^#?\/?$/, () => overview(), "overview"],
  [/^#\/tube\/([^/]+)\/(ready|reserved|delayed|buried)$/, m => tubePage(decodeURIComponent(m[1]), m[2]), "overview"],
  [/^#\/tube\/([^/]+)$/, m => tubePage(decodeURIComponent(m[1])), "overview"],
  [/^#\/job\/(\d+)$/, m => jobPage(m[1]), "overview"],
  [/^#\/failures\/(.+)$/, m => failureGroupPage(decodeURIComponent(m[1])), "failures"],
  [/^#\/failures$/, () => failuresPage(), "failures"],
  [/^#\/workers$/, () => workersPage(), "workers"],
  [/^#\/busy$/, () => busyPage(), "busy"],
  [/^#\/find\/(.+)$/, m => findPage(decodeURIComponent(m[1])), "overview"],
  [/^#\/analytics$/, () => analyticsPage(), "analytics", "static"],  // no refresh: the report stays put
  [/^#\/qless$/, () => qlessPage(), "qless"],
];

async function render(fresh, byTimer) {
  const hash = location.hash || "#/";
  const route = ROUTES.find(([re]) => re.test(hash));
  if (fresh) { lastValues = new Map(); }
  if (!route) { show(h("h1", {}, "Not found"), h("p", {}, h("a", { href: "#/" }, "Overview"))); return; }
  document.querySelectorAll("nav a").forEach(a => a.classList.toggle("active", a.dataset.page === route[2]));
  if (byTimer && document.activeElement && document.activeElement.tagName === "INPUT") return; // typing
  if (byTimer && route[3] === "static") return;
  try {
    header();
    await route[1](hash.match(route[0]));
    document.getElementById("updated").textContent = `updated ${new Date().toLocaleTimeString()}`;
  } catch (err) {
    show(h("h1", {}, "Cannot show this page"), h("p", { class: "alert" }, err.message));
  }
}

async function header() {
  try {
    const s = await api("/api/v1/summary");
    document.getElementById("server").textContent = `${s.hostname} · v${s.version} · up ${s.uptime_s ? ms(s.uptime_s * 1000) : "< 1 s"}`;
  } catch (err) { /* shown by the page itself */ }
}

function schedule() {
  clearInterval(refreshTimer);
  refreshTimer = setInterval(() => {
    if (document.getElementById("auto").checked && document.getElementById("modal").hidden) render(false, true);
  }, REFRESH_MS);
}

window.addEventListener("hashchange", () => { rateBase = null; render(true); });
render(true);
schedule();
