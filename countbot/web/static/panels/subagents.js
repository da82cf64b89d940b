// Subagents: every background helper a chat started, newest first, with its task, state and
// report; a running one can be stopped, and each opens its own or its parent's conversation.

import { api } from "../lib/api.js";
import { h } from "../lib/dom.js";
import { formatTime } from "../lib/format.js";
import { toast } from "../lib/toast.js";
import { loadPanel } from "./panel.js";

const ACTIVE = new Set(["queued", "running"]);
const STATES = ["queued", "running", "done", "error", "timeout", "cancelled", "interrupted"];

/** `openSession(id)` jumps to a conversation. */
export function renderSubagents(root, { openSession }) {
  const refresh = () =>
    loadPanel(root, "nav.subagents", () => api("/api/subagents"), (data) =>
      subagentList(data.subagents || [], refresh, openSession),
    );
  return refresh();
}

function subagentList(items, refresh, openSession) {
  if (!items.length) return h("p", { class: "muted", testid: "subagents-empty", i18n: "subagentsPage.none" });
  const newest = [...items].sort((a, b) => b.created_at - a.created_at);
  return h("ul", { class: "card-list" }, newest.map((item) => subagentCard(item, refresh, openSession)));
}

function subagentCard(item, refresh, openSession) {
  const state = STATES.includes(item.status) ? item.status : "error";
  const stop = async () => {
    try {
      await api(`/api/subagents/${encodeURIComponent(item.id)}/cancel`, { method: "POST" });
    } catch (error) {
      toast(error.message);
    }
    refresh();
  };
  const link = (key, session) =>
    h("button", { type: "button", class: "link-button", i18n: key, onclick: () => openSession(session) });
  return h(
    "li",
    { class: "card", testid: "subagent-item", dataset: { status: item.status } },
    h(
      "div",
      { class: "card-head" },
      h("strong", {}, item.label || item.id),
      h("span", { class: `badge state-${state}`, i18n: `subagentsPage.state.${state}` }),
      h("span", { class: "muted" }, formatTime(item.created_at)),
    ),
    h("p", {}, item.task),
    item.result
      ? h(
          "details",
          {},
          h("summary", { i18n: "subagentsPage.report" }),
          h("div", { class: "summary-text", testid: "subagent-result" }, item.result),
        )
      : null,
    h(
      "div",
      { class: "form-actions" },
      link("subagentsPage.openOwn", item.session_id),
      link("subagentsPage.openParent", item.parent_session),
      ACTIVE.has(item.status)
        ? h("button", { type: "button", testid: "subagent-stop", i18n: "subagents.stop", onclick: stop })
        : null,
    ),
  );
}
