import { api, query } from "../api.js";
import { bucketize, drawChart } from "../chart.js";
import { onSubmit, value } from "../forms.js";
import { cell, localInput, num, rfc3339, row, toDate, usd, when } from "../format.js";
import { authedPage } from "../session.js";

const pageSize = 50;
const chartPageSize = 1000;
const chartMaxPages = 5; // the chart reads at most this many pages of the range
const form = document.getElementById("usage-filters");
const nextButton = document.getElementById("next-page");
const firstButton = document.getElementById("first-page");
const keyNames = new Map();
let filters = {};
let nextCursor = null;

function readFilters() {
  return { from: rfc3339(value(form, "from")), to: rfc3339(value(form, "to")), key: value(form, "key"), model: value(form, "model") };
}

function entryRow(e) {
  const tr = row(
    cell(when(e.time)),
    cell(e.model),
    cell(keyNames.get(e.key_id) || e.key_id),
    cell(String(e.status)),
    cell(num(e.input_tokens), "num"),
    cell(num(e.output_tokens), "num"),
    cell(`${num(e.latency_ms)} ms`, "num"),
    cell(usd(e.cost_usd), "num cost"),
    cell(usd(e.list_cost_usd), "num"),
  );
  tr.dataset.requestId = e.request_id;
  return tr;
}

function showPage(page, cursor) {
  const entries = page.data || [];
  document.getElementById("usage-rows").replaceChildren(...entries.map(entryRow));
  document.getElementById("no-usage").hidden = entries.length > 0;
  const t = page.totals || {};
  document.getElementById("usage-totals").textContent =
    `${num(t.count)} requests in the range · cost ${usd(t.cost_usd)} · at model prices ${usd(t.list_cost_usd)} · ` +
    `${num(t.input_tokens)} input and ${num(t.output_tokens)} output tokens`;
  nextCursor = page.next_cursor || null;
  nextButton.hidden = !nextCursor;
  firstButton.hidden = !cursor;
}

async function loadPage(cursor) {
  const params = cursor ? { cursor } : { ...filters, limit: pageSize };
  showPage(await api("GET", "/account/v1/usage" + query(params)), cursor);
}

// loadChart reads the range's entries (up to chartMaxPages pages) and draws them by time.
async function loadChart() {
  const entries = [];
  let cursor = null;
  let pages = 0;
  do {
    const page = await api("GET", "/account/v1/usage" + query(cursor ? { cursor } : { ...filters, limit: chartPageSize }));
    for (const e of page.data || []) entries.push({ ms: toDate(e.time).getTime(), cost: Number(e.list_cost_usd) || 0 });
    cursor = page.next_cursor;
    pages++;
  } while (cursor && pages < chartMaxPages);
  const note = document.getElementById("chart-note");
  note.hidden = !cursor;
  note.textContent = cursor ? `The chart shows the first ${entries.length} requests of the range; narrow it to see the rest.` : "";
  const start = filters.from ? Date.parse(filters.from) : entries.length ? entries[0].ms : Date.now() - 86400e3;
  const end = filters.to ? Date.parse(filters.to) : Date.now();
  drawChart(document.getElementById("usage-chart"), bucketize(entries, start, end), "the cost at model prices");
}

function show() {
  filters = readFilters();
  document.getElementById("csv-link").href = "/account/v1/usage.csv" + query(filters);
  return Promise.all([loadPage(null), loadChart()]);
}

async function loadKeys() {
  const list = await api("GET", "/account/v1/keys");
  const select = form.elements.key;
  for (const k of list.data || []) {
    keyNames.set(k.id, k.name);
    const opt = document.createElement("option");
    opt.value = k.id;
    opt.textContent = k.name + (k.revoked_at ? " (revoked)" : "");
    select.append(opt);
  }
}

onSubmit(form, show);
nextButton.addEventListener("click", () => loadPage(nextCursor).catch((err) => onPageError(err)));
firstButton.addEventListener("click", () => loadPage(null).catch((err) => onPageError(err)));

function onPageError(err) {
  const top = form.querySelector(".form-error");
  top.textContent = err.message;
  top.hidden = false;
}

authedPage(async () => {
  const params = new URLSearchParams(location.search);
  form.elements.from.value = localInput(params.get("from") || new Date(Date.now() - 7 * 86400e3).toISOString());
  if (params.get("to")) form.elements.to.value = localInput(params.get("to"));
  await loadKeys();
  form.elements.key.value = params.get("key") || "";
  form.elements.model.value = params.get("model") || "";
  await show();
});
