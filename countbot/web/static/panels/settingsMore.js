// The Settings page's sections beyond the model and persona: tools (web search backend, exec
// approval), budgets, the heartbeat and the data-flow policy (security.outbound). Each returns
// its part of the PUT body; what a save could not apply at once is named after it.

import { h } from "../lib/dom.js";
import { field } from "./panel.js";

const SEARCH_BACKENDS = ["none", "brave", "searxng"];
const APPROVALS = ["auto", "on-miss", "always"];
const OUTBOUND = ["ask", "deny", "off"];
const BUDGETS = ["daily_tokens", "daily_cost", "session_tokens", "turn_tokens"];

function choice(values, current, testid, keyPrefix) {
  return h(
    "select",
    { testid },
    values.map((value) =>
      h("option", { value, selected: value === current, i18n: `${keyPrefix}.${value}` }),
    ),
  );
}

function number(value, testid, props = {}) {
  return h("input", { type: "number", min: 0, value: value ?? "", testid, ...props });
}

/** The sections for `data` (GET /api/settings): `{el, body()}`, body() giving their patch. */
export function moreSettings(data) {
  const tools = data.tools || {};
  const web = tools.web || {};
  const inputs = {
    search: choice(SEARCH_BACKENDS, web.search_backend, "settings-search-backend", "settings.search"),
    searchUrl: h("input", { type: "url", value: web.search_url ?? "", testid: "settings-search-url" }),
    approval: choice(APPROVALS, tools.exec?.approval, "settings-exec-approval", "settings.approval"),
    outbound: choice(OUTBOUND, data.security?.outbound, "settings-outbound", "settings.outbound"),
    beat: h("input", { type: "checkbox", checked: Boolean(data.heartbeat?.enabled), testid: "settings-heartbeat" }),
    beatMinutes: number(data.heartbeat?.interval_minutes, "settings-heartbeat-minutes", { min: 1 }),
  };
  const budget = Object.fromEntries(
    BUDGETS.map((name) => [name, number(data.budget?.[name], `settings-budget-${name}`, { step: "any" })]),
  );
  const el = h(
    "div",
    {},
    h(
      "fieldset",
      { testid: "settings-tools" },
      h("legend", { i18n: "settings.tools" }),
      field("settings.searchBackend", inputs.search, "settings.searchHint"),
      field("settings.searchUrl", inputs.searchUrl),
      field("settings.execApproval", inputs.approval, "settings.execApprovalHint"),
    ),
    h(
      "fieldset",
      { testid: "settings-budget" },
      h("legend", { i18n: "settings.budget" }),
      h("p", { class: "field-hint", i18n: "settings.budgetHint" }),
      h("div", { class: "field-row" }, BUDGETS.map((name) => field(`settings.budget.${name}`, budget[name]))),
    ),
    h(
      "fieldset",
      { testid: "settings-heartbeat-section" },
      h("legend", { i18n: "settings.heartbeat" }),
      h("label", { class: "switch" }, inputs.beat, h("span", { i18n: "settings.heartbeatOn" })),
      field("settings.heartbeatMinutes", inputs.beatMinutes, "settings.heartbeatHint"),
    ),
    h(
      "fieldset",
      { testid: "settings-security" },
      h("legend", { i18n: "settings.security" }),
      field("settings.outboundLabel", inputs.outbound, "settings.outboundHint"),
    ),
  );
  const amount = (input, parse) => (input.value.trim() === "" ? null : parse(input.value));
  const body = () => ({
    tools: {
      web: { search_backend: inputs.search.value, search_url: inputs.searchUrl.value.trim() || null },
      exec: { approval: inputs.approval.value },
    },
    budget: Object.fromEntries(
      BUDGETS.map((name) => [name, amount(budget[name], name === "daily_cost" ? Number : (v) => Number.parseInt(v, 10))]),
    ),
    heartbeat: {
      enabled: inputs.beat.checked,
      interval_minutes: amount(inputs.beatMinutes, (v) => Number.parseInt(v, 10)) ?? 60,
    },
    security: { outbound: inputs.outbound.value },
  });
  return { el, body };
}

/** After a save: whether the model answered, and which changes wait for a restart. */
export function saveResult(data) {
  const check = data.model_check;
  const lines = [];
  if (check && check.ok !== null) {
    lines.push(
      h("p", {
        class: "status-line",
        testid: "settings-model-check",
        dataset: { kind: check.ok ? "ok" : "error" },
        i18n: check.ok ? "settings.modelAnswered" : "settings.modelFailed",
        i18nArgs: { detail: check.text },
      }),
    );
  }
  if (data.restart?.length) {
    lines.push(
      h("p", {
        class: "status-line",
        testid: "settings-restart",
        dataset: { kind: "busy" },
        i18n: "settings.restartNeeded",
        i18nArgs: { sections: data.restart.join(", ") },
      }),
    );
  }
  return lines.length ? h("div", { class: "save-result" }, lines) : null;
}
