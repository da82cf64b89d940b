// Triggers: the webhooks, watched folders and mailboxes configured, events waiting too long, and
// each recent event with how it ended; an event can be run again, and each trigger's session opened.

import { api } from "../lib/api.js";
import { h } from "../lib/dom.js";
import { formatTime } from "../lib/format.js";
import { toast } from "../lib/toast.js";
import { loadPanel } from "./panel.js";

const STATES = ["received", "running", "delivered", "failed"];
// While an event waits or runs, the page looks again this often (ms) until it has ended.
const FOLLOW_MS = 1500;

/** `openSession(id)` jumps to a trigger's conversation. */
export function renderTriggers(root, { openSession }) {
  const load = async () => {
    const [configured, recent] = await Promise.all([api("/api/triggers"), api("/api/triggers/events")]);
    return { ...configured, events: recent.events || [] };
  };
  const refresh = () =>
    loadPanel(root, "nav.triggers", load, (data) => {
      if (data.events.some((event) => event.status === "received" || event.status === "running")) {
        setTimeout(() => {
          if (root.isConnected && location.hash === "#/triggers") refresh();
        }, FOLLOW_MS);
      }
      return page(data, refresh, openSession);
    });
  return refresh();
}

function page(data, refresh, openSession) {
  const triggers = data.triggers || [];
  const alarms = data.alarms || [];
  return h(
    "div",
    {},
    alarms.length
      ? h("p", {
          class: "load-error",
          role: "alert",
          testid: "trigger-alarm",
          i18n: "triggersPage.alarm",
          i18nArgs: { count: alarms.length },
        })
      : null,
    triggers.length
      ? h("ul", { class: "card-list" }, triggers.map((item) => triggerCard(item, openSession)))
      : h("p", { class: "muted", testid: "triggers-empty", i18n: "triggersPage.none" }),
    h("h3", { i18n: "triggersPage.events" }),
    data.events.length
      ? h("ul", { class: "card-list" }, data.events.map((event) => eventCard(event, refresh)))
      : h("p", { class: "muted", i18n: "triggersPage.noEvents" }),
  );
}

function triggerCard(item, openSession) {
  return h(
    "li",
    { class: "card", testid: "trigger-item", dataset: { kind: item.kind } },
    h(
      "div",
      { class: "card-head" },
      h("strong", {}, item.name),
      h("span", { class: "badge", i18n: `triggersPage.kind.${item.kind}` }),
      item.enabled ? null : h("span", { class: "muted", i18n: "triggersPage.off" }),
    ),
    h("p", {}, item.prompt),
    h("p", { class: "muted", i18n: "triggersPage.deliver", i18nArgs: { target: item.deliver || "—" } }),
    h("p", { class: "muted", i18n: "triggersPage.tools", i18nArgs: { tools: item.tools.join(", ") } }),
    h("button", {
      type: "button",
      class: "link-button",
      i18n: "triggersPage.open",
      onclick: () => openSession(`trigger:${item.name}`),
    }),
  );
}

function eventCard(event, refresh) {
  const state = STATES.includes(event.status) ? event.status : "failed";
  const again = async () => {
    try {
      await api(`/api/triggers/events/${event.id}/again`, { method: "POST" });
    } catch (error) {
      toast(error.message);
    }
    refresh();
  };
  return h(
    "li",
    { class: "card", testid: "trigger-event", dataset: { status: event.status } },
    h(
      "div",
      { class: "card-head" },
      h("strong", {}, `${event.trigger} #${event.id}`),
      h("span", {
        class: `badge ${state === "failed" ? "state-error" : state === "running" ? "state-running" : ""}`,
        i18n: `triggersPage.state.${state}`,
      }),
      h("span", { class: "muted" }, formatTime(event.received_at)),
    ),
    event.detail ? h("p", { class: "muted" }, event.detail) : null,
    event.answer
      ? h("details", {}, h("summary", { i18n: "triggersPage.answer" }), h("div", { class: "summary-text" }, event.answer))
      : null,
    // An event still waiting or running will run anyway: "again" is for one that has ended.
    state === "delivered" || state === "failed"
      ? h(
          "div",
          { class: "form-actions" },
          h("button", { type: "button", testid: "trigger-again", i18n: "triggersPage.again", onclick: again }),
        )
      : null,
  );
}
