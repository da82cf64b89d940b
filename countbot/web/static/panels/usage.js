// Token use and cost: totals, per day (with a bar for comparison) and per session.

import { api } from "../lib/api.js";
import { h } from "../lib/dom.js";
import { formatCost, formatNumber } from "../lib/format.js";
import { dataTable, loadPanel } from "./panel.js";

/** `openSession(id)` jumps to a session's chat. */
export function renderUsage(root, { openSession }) {
  return loadPanel(root, "usage.title", () => api("/api/usage"), (data) =>
    usageReport(data, openSession),
  );
}

function tokens(row) {
  return (row.prompt_tokens || 0) + (row.completion_tokens || 0);
}

/** Today's spend against each `budget.*` limit; nothing when no limit is set. */
function budgetTable(today) {
  const limits = (today && today.limits) || [];
  if (!limits.length) return null;
  const shown = (row, value) => (row.dollars ? formatCost(value) : formatNumber(value));
  const rows = limits.map((row) =>
    h(
      "tr",
      {},
      h("td", {}, h("code", {}, `budget.${row.key}`)),
      h("td", { class: "num" }, row.spent === null ? "—" : shown(row, row.spent)),
      h("td", { class: "num" }, shown(row, row.limit)),
      h("td", { class: "num" }, row.spent === null ? "" : `${Math.round((100 * row.spent) / row.limit)}%`),
    ),
  );
  return [
    h("h3", { i18n: "usage.budget" }),
    dataTable(["usage.limit", "usage.spent", "usage.of", ""], rows, "usage-budget"),
  ];
}

function usageReport(data, openSession) {
  const totals = data.totals || {};
  const byDay = data.by_day || [];
  const bySession = data.by_session || [];
  const busiest = Math.max(1, ...byDay.map(tokens));
  const numbers = (row) => [
    h("td", { class: "num" }, formatNumber(row.prompt_tokens)),
    h("td", { class: "num" }, formatNumber(row.completion_tokens)),
    h("td", { class: "num" }, formatCost(row.cost_usd)),
  ];
  const bar = (row) => {
    const fill = h("span", { class: "bar-fill" });
    fill.style.width = `${(100 * tokens(row)) / busiest}%`;
    return h("td", { class: "bar-cell", "aria-hidden": "true" }, h("span", { class: "bar" }, fill));
  };
  return h(
    "div",
    { class: "usage" },
    h(
      "div",
      { class: "stat-grid" },
      stat("usage.promptTokens", formatNumber(totals.prompt_tokens)),
      stat("usage.completionTokens", formatNumber(totals.completion_tokens)),
      stat("usage.totalTokens", formatNumber(totals.total_tokens ?? tokens(totals))),
      stat("usage.cachedTokens", formatNumber(totals.cached_tokens || 0)),
      stat("usage.recallTokens", formatNumber(totals.recall_tokens || 0)),
      stat("usage.cost", formatCost(totals.cost_usd)),
    ),
    budgetTable(data.today),
    h("h3", { i18n: "usage.byDay" }),
    byDay.length
      ? dataTable(
          ["usage.day", "usage.prompt", "usage.completion", "usage.cost", ""],
          byDay.map((row) => h("tr", {}, h("td", {}, row.day), numbers(row), bar(row))),
          "usage-by-day",
        )
      : h("p", { class: "muted", i18n: "usage.none" }),
    purposeTable(data.by_purpose || [], numbers),
    agentTable(data.by_agent || [], numbers),
    h("h3", { i18n: "usage.bySession" }),
    bySession.length
      ? dataTable(
          ["usage.session", "usage.prompt", "usage.completion", "usage.cost"],
          bySession.map((row) => h("tr", {}, h("td", {}, sessionLink(row, openSession)), numbers(row))),
          "usage-by-session",
        )
      : h("p", { class: "muted", i18n: "usage.none" }),
  );
}

/** What the answers cost against housekeeping (summaries, the memory flush); nothing when only
 * answers were paid for. */
function purposeTable(byPurpose, numbers) {
  if (!byPurpose.some((row) => row.purpose !== "answer")) return null;
  const name = (purpose) => h("td", { i18n: `usage.purpose.${purpose}` });
  return [
    h("h3", { i18n: "usage.byPurpose" }),
    dataTable(
      ["usage.purpose", "usage.prompt", "usage.completion", "usage.cost"],
      byPurpose.map((row) => h("tr", {}, name(row.purpose), numbers(row))),
      "usage-by-purpose",
    ),
  ];
}

/** What each assistant spent (`agents:` in config.yaml); nothing while only `main` has. */
function agentTable(byAgent, numbers) {
  if (!byAgent.some((row) => row.agent !== "main")) return null;
  return [
    h("h3", { i18n: "usage.byAgent" }),
    dataTable(
      ["usage.agent", "usage.prompt", "usage.completion", "usage.cost"],
      byAgent.map((row) => h("tr", {}, h("td", {}, row.agent), numbers(row))),
      "usage-by-agent",
    ),
  ];
}

function sessionLink(row, openSession) {
  const open = () => openSession(row.session_id);
  return h("button", { type: "button", class: "link-button", onclick: open }, row.title || row.session_id);
}

function stat(key, value) {
  return h("div", { class: "stat" }, h("div", { class: "stat-label", i18n: key }), h("div", { class: "stat-value" }, value));
}
