// The audit trail: recent tool calls, filtered by tool, status and session.

import { api, query } from "../lib/api.js";
import { debounce, h } from "../lib/dom.js";
import { formatDuration, formatTime } from "../lib/format.js";
import { statusLabel } from "../chat/toolCard.js";
import { renderAllowed } from "./allowed.js";
import { loadPanel } from "./panel.js";

const STATUSES = ["ok", "error", "timeout", "cancelled", "skipped"];
const LIMITS = [50, 100, 200, 500];

/** `openSession(id)` jumps to a session's chat. */
export function renderAudit(root, { openSession }) {
  const filters = { tool: "", status: "", session_id: "", limit: 100 };
  const results = h("div", { class: "audit-results" });
  const refresh = () =>
    loadPanel(results, null, () => api(`/api/audit${query(filters)}`), (data) => entryList(data, openSession));
  const bind = (el, key) => {
    const update = () => {
      filters[key] = el.value.trim();
      refresh();
    };
    el.addEventListener(el.tagName === "SELECT" ? "change" : "input", debounce(update, 300));
    return el;
  };
  const form = h(
    "form",
    { class: "filters", onsubmit: (event) => event.preventDefault() },
    bind(h("input", { type: "search", testid: "audit-tool", i18nAttrs: { placeholder: "audit.tool", "aria-label": "audit.tool" } }), "tool"),
    bind(
      h(
        "select",
        { testid: "audit-status", i18nAttrs: { "aria-label": "audit.status" } },
        h("option", { value: "", i18n: "audit.anyStatus" }),
        STATUSES.map((s) => h("option", { value: s, i18n: `tool.status.${s}` })),
      ),
      "status",
    ),
    bind(h("input", { type: "search", testid: "audit-session", i18nAttrs: { placeholder: "audit.session", "aria-label": "audit.session" } }), "session_id"),
    bind(
      h(
        "select",
        { i18nAttrs: { "aria-label": "audit.limit" } },
        LIMITS.map((n) => h("option", { value: n, selected: n === filters.limit }, String(n))),
      ),
      "limit",
    ),
  );
  const allowed = h("div", { class: "allowed-rules" });
  root.replaceChildren(h("h2", { class: "visually-hidden", i18n: "audit.title" }), allowed, form, results);
  renderAllowed(allowed);
  return refresh();
}

function entryList(data, openSession) {
  const entries = data.entries || [];
  if (!entries.length) return h("p", { class: "muted", i18n: "audit.none" });
  return h("div", { class: "audit-list" }, entries.map((entry) => auditEntry(entry, openSession)));
}

function auditEntry(entry, openSession) {
  const args =
    typeof entry.arguments === "string" ? entry.arguments : JSON.stringify(entry.arguments, null, 2);
  return h(
    "details",
    { class: "audit-entry tool-card", testid: "audit-entry", dataset: { status: entry.status } },
    h(
      "summary",
      {},
      h("span", { class: "tool-dot", "aria-hidden": "true" }),
      h("span", { class: "tool-name" }, entry.name),
      statusLabel(h("span", { class: "tool-status" }), entry.status),
      h("span", { class: "tool-duration" }, formatDuration(entry.duration_ms)),
      h("span", { class: "audit-time muted" }, formatTime(entry.ts)),
    ),
    h(
      "div",
      { class: "tool-body" },
      entry.session_id
        ? h(
            "p",
            {},
            h("span", { class: "muted", i18n: "audit.session" }),
            " ",
            h(
              "button",
              { type: "button", class: "link-button", onclick: () => openSession(entry.session_id) },
              entry.session_id,
            ),
          )
        : null,
      h("div", { class: "tool-section-title", i18n: "tool.arguments" }),
      h("pre", { class: "tool-args" }, args ?? ""),
      h("div", { class: "tool-section-title", i18n: "tool.result" }),
      h("pre", { class: "tool-result" }, entry.result ?? ""),
    ),
  );
}
