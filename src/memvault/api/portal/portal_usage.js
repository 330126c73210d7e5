"use strict";

// Usage: what the memory key in use spent per UTC day (or per model) over the chosen span, drawn as
// small bar charts in SVG built node by node (no chart library, nothing from another origin), each
// with a title and a summary for screen readers, and one table below holding every number drawn.
// Model names come from the server and reach the page as text only.

const SVG_NS = "http://www.w3.org/2000/svg";
const USAGE_CHARTS = [
  { id: "calls", title: "Calls", unit: "calls", series: [["calls", "calls"]] },
  { id: "provider", title: "Provider tokens", unit: "provider tokens", series: [["input_tokens", "in"], ["output_tokens", "out"]] },
  { id: "memory", title: "Memory tokens injected", unit: "memory tokens", series: [["memory_tokens", "memory tokens"]] },
];
const NO_MODEL = "(searches and stores)";
const DAY_MS = 86_400_000;
let usageShown = null;
let usageRequest = 0;
let usageWidth = 0;
let usageKey = null;

function number(value) {
  return Number(value || 0).toLocaleString("en-US");
}

function utcDaysBack(days) {
  return new Date(Date.now() - days * DAY_MS).toISOString().slice(0, 10);
}

function daysBetween(first, last) {
  const days = [];
  for (let at = Date.parse(first + "T00:00:00Z"); at <= Date.parse(last + "T00:00:00Z"); at += DAY_MS) {
    days.push(new Date(at).toISOString().slice(0, 10));
  }
  return days;
}

function groupName(row, groupBy) {
  return groupBy === "day" ? row.day : row.model || NO_MODEL;
}

async function loadUsage() {
  const key = sessionStorage.getItem(MEMORY_KEY);
  const mine = ++usageRequest;
  if (!key) {
    usageShown = null;
    byId("usage-charts").replaceChildren();
    return say("usage-status", "Enter a memory key to see its usage.");
  }
  if (key !== usageKey) {
    // Another key's charts never stay up while this key's are loading.
    usageShown = null;
    byId("usage-charts").replaceChildren();
  }
  usageKey = key;
  const days = Number(byId("usage-range").value);
  const query = new URLSearchParams({ from: utcDaysBack(days - 1), to: utcDaysBack(0), group_by: byId("usage-group").value });
  say("usage-status", "Loading usage…");
  try {
    const data = await call("/v1/usage?" + query, { token: key });
    if (mine !== usageRequest) return;
    usageShown = data;
    drawUsage();
  } catch (error) {
    // The memory key's own trouble: the brain session, if any, stays signed in.
    if (mine === usageRequest) say("usage-status", error instanceof ApiError ? error.message : "memvault could not be reached.", true);
  }
}

function drawUsage() {
  const data = usageShown;
  if (!data) return;
  const span = data.from_day === data.to_day ? "on " + data.to_day : data.from_day + " to " + data.to_day;
  const total = data.total;
  const provider = total.input_tokens + total.output_tokens;
  if (!total.calls && !provider && !total.memory_tokens) {
    byId("usage-charts").replaceChildren();
    return say("usage-status", "No calls yet " + span + " (UTC).");
  }
  say("usage-status", number(total.calls) + " calls, " + number(provider) + " provider tokens (" + number(total.input_tokens) +
    " in, " + number(total.output_tokens) + " out), " + number(total.memory_tokens) + " memory tokens injected " + span + " (UTC).");
  const byDay = data.group_by === "day";
  const groups = byDay ? daysBetween(data.from_day, data.to_day) : data.rows.map((row) => groupName(row, "model"));
  const rows = new Map(data.rows.map((row) => [groupName(row, data.group_by), row]));
  usageWidth = byId("usage-charts").clientWidth;
  const width = Math.max(240, usageWidth || 320);
  const charts = USAGE_CHARTS.map((spec) => usageFigure(spec, groups, rows, width, byDay));
  const numbers = usageTable(groups, rows, byDay);
  // A redraw (another width, another span) keeps the table open if it was.
  numbers.open = Boolean(byId("usage-charts").querySelector("details[open]"));
  byId("usage-charts").replaceChildren(...charts, numbers);
}

function usageFigure(spec, groups, rows, width, byDay) {
  const legend = spec.series.length > 1
    ? el("span", "legend", ...spec.series.map(([field, label]) => el("span", "key", el("span", "swatch " + field), label)))
    : null;
  const caption = el("figcaption", "", el("strong", "", spec.title), legend);
  return el("figure", "usage-chart", caption, barChart(spec, groups, rows, width, byDay));
}

function svg(tag, attributes = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  for (const child of children) node.append(child);
  return node;
}

// 1, 2 or 5 times a power of ten, at least the largest value: gridlines at round numbers.
function niceMax(value) {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 5, 10].map((step) => step * power).find((candidate) => candidate >= value);
}

function barChart(spec, groups, rows, width, byDay) {
  const height = 150, left = 48, right = 8, top = 10, bottom = 24;
  const plotWidth = width - left - right, plotHeight = height - top - bottom;
  const valueOf = (group, field) => Number((rows.get(group) || {})[field] || 0);
  const totals = groups.map((group) => spec.series.reduce((sum, [field]) => sum + valueOf(group, field), 0));
  const max = niceMax(Math.max(0, ...totals));
  const peak = totals.indexOf(Math.max(...totals));
  const titleId = "usage-" + spec.id + "-title";
  const summary = number(totals.reduce((a, b) => a + b, 0)) + " " + spec.unit + " in all; the most, " + number(totals[peak]) +
    ", " + (byDay ? "on " : "for ") + groups[peak] + ".";
  const chart = svg("svg", { class: "chart", width, height, viewBox: `0 0 ${width} ${height}`, role: "img", "aria-labelledby": titleId },
    svg("title", { id: titleId }, spec.title + ": " + summary));
  // No half a call: the middle line only where it is a whole number.
  for (const tick of [0, max / 2, max].filter(Number.isInteger)) {
    const y = top + plotHeight - (tick / max) * plotHeight;
    chart.append(svg("line", { class: "grid", x1: left, x2: width - right, y1: y, y2: y }),
      svg("text", { class: "axis", x: left - 6, y: y + 4, "text-anchor": "end" }, number(tick)));
  }
  const slot = plotWidth / groups.length;
  const barWidth = Math.max(2, Math.min(48, slot * 0.7));
  const every = Math.ceil(groups.length / Math.max(1, Math.floor(plotWidth / (byDay ? 44 : 96))));
  groups.forEach((group, i) => {
    const x = left + i * slot + (slot - barWidth) / 2;
    const parts = spec.series.map(([field, label]) => number(valueOf(group, field)) + " " + label);
    const bar = svg("g", { class: "usage-bar", "data-group": group }, svg("title", {}, group + ": " + parts.join(", ") + (parts.length > 1 ? " " + spec.unit : "")));
    let bottomY = top + plotHeight;
    for (const [field] of spec.series) {
      const size = (valueOf(group, field) / max) * plotHeight;
      bottomY -= size;
      bar.append(svg("rect", { class: "segment " + field, x, y: bottomY, width: barWidth, height: size }));
    }
    chart.append(bar);
    if (i % every === 0) {
      const label = byDay ? group.slice(5) : group.length > 14 ? group.slice(0, 13) + "…" : group;
      chart.append(svg("text", { class: "axis", x: left + i * slot + slot / 2, y: height - 6, "text-anchor": "middle" }, label));
    }
  });
  return chart;
}

function usageTable(groups, rows, byDay) {
  const headings = [byDay ? "Day (UTC)" : "Model", "Calls", "Tokens in", "Tokens out", "Memory tokens"];
  const head = el("tr", "", ...headings.map((heading, i) => el("th", i === 0 && byDay ? "day" : "", heading)));
  const body = groups.map((group) => {
    const row = rows.get(group) || {};
    const cells = ["calls", "input_tokens", "output_tokens", "memory_tokens"].map((field) => el("td", "", number(row[field])));
    const line = el("tr", "", el("th", byDay ? "day" : "", group), ...cells);
    line.dataset.group = group;
    line.firstChild.scope = "row";
    return line;
  });
  const table = el("table", "usage-table", el("thead", "", head), el("tbody", "", ...body));
  const caption = "The numbers " + (byDay ? "per day" : "per model") + " (tokens in and out: the provider's)";
  return el("details", "usage-numbers", el("summary", "", caption), table);
}

function startUsage() {
  byId("usage-range").addEventListener("change", loadUsage);
  byId("usage-group").addEventListener("change", loadUsage);
  document.addEventListener("portal:tab", (event) => {
    if (event.detail === "conversations") loadUsage();
  });
  // Drawn to the width the charts have: again when it changes (a turned phone, a scrollbar gone).
  new ResizeObserver(() => {
    if (usageShown && byId("usage-charts").clientWidth !== usageWidth) drawUsage();
  }).observe(byId("usage-charts"));
  if (!byId("conversations-view").hidden) loadUsage();
}

startUsage();
