/* beanpod dashboard: jobs (tables, the job page, who holds each, the Busy view, finding a
   job by the id its application logs). Loaded before app.js, whose helpers (h, api, ms,
   num, table, ...) these functions call when a page renders. */
"use strict";

/** A qless jid or Workq UUID as a link that finds its job (the ids applications log). */
function keyLink(key) {
  return key ? h("a", { href: `#/find/${enc(key)}`, class: "jid" }, h("code", {}, key)) : "";
}

function keyLinks(keys) {
  const list = keys || [];
  return list.length ? list.flatMap((k, i) => (i ? [", ", keyLink(k)] : [keyLink(k)])) : "—";
}

/** Who holds a reserved job: the qless worker's name, else the client's address with
    its dialect and connection id (the id `beanpod` logs name it by). */
function holderLabel(holder) {
  if (!holder) return "";
  if (holder.name) return `${holder.name} (qless worker)`;
  return `${holder.peer || "unknown address"} (${holder.dialect} connection #${holder.conn})`;
}

function holderCell(j) {
  const holder = j.holder;
  if (!holder) return h("td", { class: "num" }, j.time_left_ms ? ms(j.time_left_ms) : "");
  return h("td", { class: "num" }, ms(j.time_left_ms), h("div", { class: "muted holder" }, `${holderLabel(holder)}, held ${ms(holder.held_ms)}`));
}

/** A qless failure: the line that names the error first (the LAST line of a Python
    traceback, else the first line), the whole message behind a toggle. */
function failureSummary(message) {
  const lines = (message || "").split("\n").map(l => l.trimEnd()).filter(Boolean);
  if (!lines.length) return "";
  return /^Traceback \(most recent call last\)/.test(lines[0]) ? lines[lines.length - 1].trim() : lines[0];
}

function failureBlock(message) {
  const first = failureSummary(message);
  const multi = (message || "").trim().includes("\n");
  return h("div", { class: "failure" }, h("div", { class: "failure-line" }, first),
    multi ? h("details", {}, h("summary", {}, "full traceback"), h("pre", { class: "traceback" }, message)) : null);
}

/** A job's actions; `q`, its qless view on the job page: a failed qless job goes back
    to its queue with qless's requeue (Retry, in place of the beanstalkd view's Kick), as
    a whole failure group does. */
function jobActions(job, q) {
  const id = job.id, failed = q && q.state === "failed";
  return h("span", { class: "toolbar", style: "margin:0" },
    failed
      ? h("button", { class: "primary", "data-retry-job": q.jid, onclick: () => act(
          post(`/api/v1/qless/jobs/${enc(q.jid)}/retry`), d => `Job ${q.jid} back to waiting in ${d.queue}`) }, "Retry") : null,
    !failed && ["buried", "delayed"].includes(job.state)
      ? h("button", { class: "primary", "data-kick": id, onclick: () => act(post(`/api/v1/jobs/${id}/kick`), `Job ${id} kicked to ready`) }, "Kick") : null,
    ["ready", "delayed"].includes(job.state)
      ? h("button", { "data-bury": id, onclick: () => act(post(`/api/v1/jobs/${id}/bury`), `Job ${id} buried`) }, "Bury") : null,
    job.state !== "reserved"
      ? h("button", { class: "danger", "data-delete": id, onclick: async () => {
          if (!(await confirmDialog(`Delete job ${id}? This cannot be undone.`, "Delete"))) return;
          if (location.hash.startsWith("#/job/")) location.hash = `#/tube/${enc(job.tube)}`;  // it will be gone
          act(post(`/api/v1/jobs/${id}/delete`), `Job ${id} deleted`);
        } }, "Delete") : null);
}

function jobTable(jobs, empty) {
  return table(["Job", "State", "Body", "Priority", "Age", "Time left", "Reserves", "Timeouts", "Buries", "Kicks", "Size", ""],
    jobs.map(j => h("tr", { "data-job": j.id },
      h("td", {}, h("a", { href: `#/job/${j.id}` }, `#${j.id}`), j.key ? h("div", { class: "muted" }, keyLink(j.key)) : null),
      h("td", {}, stateBadge(j.state)),
      h("td", { class: "body" }, snippet(j.preview)),
      h("td", { class: "num" }, num(j.pri)), h("td", { class: "num" }, ms(j.age_ms)), holderCell(j),
      h("td", { class: "num" }, j.reserves), h("td", { class: "num" }, j.timeouts),
      h("td", { class: "num" }, j.buries), h("td", { class: "num" }, j.kicks),
      h("td", { class: "num" }, `${num(j.body_size)} B`), h("td", {}, jobActions(j)))), empty);
}

function snippet(p) {
  if (!p) return "";
  if (p.encoding === "base64") return h("span", { class: "muted" }, `binary, ${num(p.size)} bytes`);
  return h("code", {}, p.data.length > 60 ? `${p.data.slice(0, 60)}…` : p.data + (p.truncated ? "…" : ""));
}

function kv(pairs) {
  return h("dl", { class: "kv" }, pairs.filter(Boolean).map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}

function holderPairs(j) {
  const holder = j.holder;
  if (!holder) return [];
  return [["held by", holderLabel(holder)], holder.name && holder.peer ? ["peer", holder.peer] : null,
    ["held for", ms(holder.held_ms)],
    [holder.name ? "worker first seen" : "connected", `${ms(holder.connected_ms)} ago`]];
}

function statsJob(j) {
  return kv([["priority", num(j.pri)], ["age", ms(j.age_ms)], ["delay", ms(j.delay_ms)], ["ttr", ms(j.ttr_ms)],
    ["time left", ms(j.time_left_ms)], ...holderPairs(j), ["reserves", j.reserves], ["timeouts", j.timeouts],
    ["releases", j.releases], ["buries", j.buries], ["kicks", j.kicks], ["body size", `${num(j.body_size)} bytes`]]);
}

/** A qless job in qless's own terms: its priority (not the mapped beanstalkd one), retries
    left, failure; the beanstalkd view behind a toggle. */
function qlessFacts(j, q) {
  const failed = q.failure && q.failure.group;
  return [kv([["jid", h("code", {}, q.jid)], ["class", q.klass], ["qless state", q.state], ["queue", q.queue || "—"],
    ["priority", num(q.priority)], ["retries", retries(q)],
    ["worker", q.worker || "—"], ...holderPairs(j), ["age", ms(j.age_ms)],
    ["tags", (q.tags || []).length ? q.tags.map(t => h("span", { class: "tag" }, t)) : "—"],
    ["depends on", keyLinks(q.dependencies)], ["dependents", keyLinks(q.dependents)],
    ["tracked", q.tracked ? "yes" : "no"], ["body size", `${num(j.body_size)} bytes`],
    failed ? ["failure group", h("code", {}, q.failure.group)] : null,
    failed && q.failure.worker ? ["failed on", `${q.failure.worker}, ${new Date(q.failure.when * 1000).toLocaleString()}`] : null]),
    failed ? h("div", {}, h("h2", {}, "Failure"), failureBlock(q.failure.message)) : null,
    h("details", { class: "beanstalkd-view" }, h("summary", {}, "beanstalkd view (stats-job)"), statsJob(j))];
}

/** qless's retries and remaining: "3 (none used)", "1 left of 3". */
function retries(q) {
  return q.remaining === q.retries ? `${num(q.retries)} (none used)` : `${num(q.remaining)} left of ${num(q.retries)}`;
}

/** A recurring template (qless `recur.get`): what it spawns and how often. */
function recurFacts(j, q) {
  const list = xs => ((xs || []).length ? xs.map(t => h("span", { class: "tag" }, t)) : "—");
  return [kv([["jid", h("code", {}, q.jid)], ["class", q.klass], ["qless state", "recurring template"],
    ["queue", q.queue || "—"], ["every", ms(q.interval * 1000)], ["spawned", `${num(q.count)} jobs so far`],
    ["priority", num(q.priority)], ["retries", `${num(q.retries)} for each job it spawns`],
    ["backlog", q.backlog ? num(q.backlog) : "—"], ["tags", list(q.tags)], ["throttles", list(q.throttles)]]),
    h("details", { class: "beanstalkd-view" }, h("summary", {}, "beanstalkd view (stats-job)"), statsJob(j))];
}

async function jobPage(id) {
  const j = await api(`/api/v1/jobs/${enc(id)}`);
  const b = j.body;
  const q = j.qless && j.qless.jid ? j.qless : null, w = j.workq, recur = q && q.state === "recur";
  const shown = b.encoding === "base64" ? Math.floor(b.data.length * 3 / 4) : b.data.length;
  show(
    // A recurring template is not a job anyone reserves: one badge, not its parking state.
    h("h1", {}, `Job #${j.id} `, recur ? null : stateBadge(j.state),
      q ? h("span", { class: "state other" }, recur ? "qless recurring template" : `qless ${q.state}`) : null,
      " in tube ", h("a", { href: `#/tube/${enc(j.tube)}` }, j.tube)),
    h("div", { class: "toolbar" }, jobActions(j, q)),
    h("div", { class: "grid2" },
      h("div", {}, h("h2", {}, q ? "qless" : "stats-job"), q ? (recur ? recurFacts(j, q) : qlessFacts(j, q)) : statsJob(j)),
      h("div", {}, h("h2", {}, `Body (${b.encoding}${b.truncated ? `, first ${num(shown)} of ${num(b.size)} bytes` : ""})`),
        h("pre", { id: "body" }, b.data))),
    q && !recur ? h("div", {}, h("h2", {}, "History"),
      table(["When", "What", "Details"], (q.history || []).map(e => h("tr", {},
        h("td", {}, new Date(e.when * 1000).toLocaleString()), h("td", {}, e.what),
        h("td", {}, Object.entries(e).filter(([k]) => k !== "when" && k !== "what").map(([k, v]) => `${k}=${v}`).join(" ")))),
        "No history.")) : null,
    w ? h("div", {}, h("h2", {}, "Workq"), kv([
      ["uuid", h("code", {}, w.uuid)], ["attempts", `${w.attempts} of ${w.max_attempts || "∞"}`],
      ["fails", `${w.fails} of ${w.max_fails || "∞"}`], ["ttl", ms(w.ttl_ms)], ["outcome", w.outcome],
      ["result", w.result.size ? w.result.data : "—"]])) : null);
}

async function busyPage() {
  const busy = await api("/api/v1/busy");
  show(
    h("h1", {}, "Busy"),
    h("p", { class: "muted" }, `${num(busy.count)} job${busy.count === 1 ? "" : "s"} held by ${num(busy.connections)} `
      + `connection${busy.connections === 1 ? "" : "s"} or qless worker${busy.connections === 1 ? "" : "s"}, longest held first.`),
    table(["Held by", "Job", "Tube", "Held for", "TTR left", "Connected"], busy.jobs.map(r => h("tr", { "data-job": r.id },
      h("td", { class: "holder-name" }, holderLabel(r.holder)),
      h("td", {}, h("a", { href: `#/job/${r.id}` }, `#${r.id}`), r.key ? h("div", { class: "muted" }, keyLink(r.key)) : null),
      h("td", {}, h("a", { href: `#/tube/${enc(r.tube)}/reserved` }, r.tube)),
      h("td", { class: "num" }, ms(r.holder.held_ms)),
      h("td", { class: `num ${r.ttr_left_ms < 5000 ? "alert" : ""}` }, `${ms(r.ttr_left_ms)} of ${ms(r.ttr_ms)}`),
      h("td", { class: "num" }, `${ms(r.holder.connected_ms)} ago`))),
      "No job is held right now."));
}

async function findPage(key) {
  let found;
  try {
    found = await api(`/api/v1/find?q=${enc(key)}`);
  } catch (err) {
    show(h("h1", {}, "Find ", h("code", {}, key)), h("div", { class: "empty" }, err.message));
    return;
  }
  if (found.matches.length === 1) { location.replace(`#/job/${found.matches[0].id}`); return; }
  show(h("h1", {}, "Jobs named ", h("code", {}, key)),
    table(["Job", "Matched by", "Tube", "State", "Dialect"], found.matches.map(m => h("tr", {},
      h("td", {}, h("a", { href: `#/job/${m.id}` }, `#${m.id}`)), h("td", {}, m.by), h("td", {}, m.tube),
      h("td", {}, stateBadge(m.state)), h("td", {}, m.dialect)))));
}

document.getElementById("find").addEventListener("submit", event => {
  event.preventDefault();
  const text = document.getElementById("find-q").value.trim();
  if (text) location.hash = `#/find/${enc(text)}`;
});
