// Token use and cost: totals, per day (with a bar for comparison) and per session.

import { api } from "../lib/api.js";
import { h } from "../lib/dom.js";
import { formatCost, formatNumber } from "../lib/format.js";
import { loadPanel } from "./panel.js";

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
function budgetTable(today, headings) {
  const limits = (today && today.limits) || [];
  if (!limits.length) return null;
  const shown = (row, value) => (row.dollars ? formatCost(value) : formatNumber(value));
  return h(
    "div",
    { class: "table-wrap" },
    h("h3", { i18n: "usage.budget" }),
    h(
      "table",
      { class: "data-table", testid: "usage-budget" },
      headings(["usage.limit", "usage.spent", "usage.of", ""]),
      h(
        "tbody",
        {},
        limits.map((row) =>
          h(
            "tr",
            {},
            h("td", {}, h("code", {}, `budget.${row.key}`)),
            h("td", { class: "num" }, row.spent === null ? "—" : shown(row, row.spent)),
            h("td", { class: "num" }, shown(row, row.limit)),
            h("td", { class: "num" }, row.spent === null ? "" : `${Math.round((100 * row.spent) / row.limit)}%`),
          ),
        ),
      ),
    ),
  );
}

function usageReport(data, openSession) {
  const totals = data.totals || {};
  const byDay = data.by_day || [];
  const bySession = data.by_session || [];
  const busiest = Math.max(1, ...byDay.map(tokens));
  const headings = (keys) => h("thead", {}, h("tr", {}, keys.map((key) => h("th", key ? { i18n: key } : {}))));
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
      stat("usage.cost", formatCost(totals.cost_usd)),
    ),
    budgetTable(data.today, headings),
    h("h3", { i18n: "usage.byDay" }),
    byDay.length
      ? h(
          "div",
          { class: "table-wrap" },
          h(
            "table",
            { class: "data-table", testid: "usage-by-day" },
            headings(["usage.day", "usage.prompt", "usage.completion", "usage.cost", ""]),
            h("tbody", {}, byDay.map((row) => h("tr", {}, h("td", {}, row.day), numbers(row), bar(row)))),
          ),
        )
      : h("p", { class: "muted", i18n: "usage.none" }),
    h("h3", { i18n: "usage.bySession" }),
    bySession.length
      ? h(
          "div",
          { class: "table-wrap" },
          h(
            "table",
            { class: "data-table", testid: "usage-by-session" },
            headings(["usage.session", "usage.prompt", "usage.completion", "usage.cost"]),
            h(
              "tbody",
              {},
              bySession.map((row) =>
                h(
                  "tr",
                  {},
                  h(
                    "td",
                    {},
                    h(
                      "button",
                      {
                        type: "button",
                        class: "link-button",
                        onclick: () => openSession(row.session_id),
                      },
                      row.title || row.session_id,
                    ),
                  ),
                  numbers(row),
                ),
              ),
            ),
          ),
        )
      : h("p", { class: "muted", i18n: "usage.none" }),
  );
}

function stat(key, value) {
  return h("div", { class: "stat" }, h("div", { class: "stat-label", i18n: key }), h("div", { class: "stat-value" }, value));
}
