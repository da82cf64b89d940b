// Triggers: the webhooks, watched folders and mailboxes configured, events waiting too long, and
// each recent event with how it ended; an event can be run again, and each trigger's session opened.

import { api } from "../lib/api.js";
import { h } from "../lib/dom.js";
import { formatTime } from "../lib/format.js";
import { toast } from "../lib/toast.js";
import { field, loadPanel, statusLine } from "./panel.js";

const STATES = ["received", "running", "delivered", "failed"];
// While an event waits or runs, the page looks again this often (ms) until it has ended.
const FOLLOW_MS = 1500;

/** `openSession(id)` jumps to a trigger's conversation. */
export function renderTriggers(root, { openSession }) {
  const load = async () => {
    const [configured, recent] = await Promise.all([api("/api/triggers"), api("/api/triggers/events")]);
    return { ...configured, events: recent.events || [] };
  };
  // The page follows running events, but never redraws over a webhook being typed in or a new
  // secret not yet copied.
  const follow = () => {
    if (!root.isConnected || location.hash !== "#/triggers") return;
    if (root.querySelector("[data-testid=hook-secret]") || typing(root)) setTimeout(follow, FOLLOW_MS);
    else refresh();
  };
  const refresh = () =>
    loadPanel(root, "nav.triggers", load, (data) => {
      if (data.events.some((event) => event.status === "received" || event.status === "running")) {
        setTimeout(follow, FOLLOW_MS);
      }
      return page(data, refresh, openSession);
    });
  return refresh();
}

function typing(root) {
  const form = root.querySelector("[data-testid=hook-form]");
  return Boolean(form && (form.contains(document.activeElement) || form.querySelector("textarea").value));
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
      ? h("ul", { class: "card-list" }, triggers.map((item) => triggerCard(item, refresh, openSession)))
      : h("p", { class: "muted", testid: "triggers-empty", i18n: "triggersPage.none" }),
    hookForm(refresh),
    h("h3", { i18n: "triggersPage.events" }),
    data.events.length
      ? h("ul", { class: "card-list" }, data.events.map((event) => eventCard(event, refresh)))
      : h("p", { class: "muted", i18n: "triggersPage.noEvents" }),
  );
}

function triggerCard(item, refresh, openSession) {
  const toggle = async () => {
    try {
      const body = { enabled: !item.enabled };
      await api(`/api/triggers/hooks/${encodeURIComponent(item.name)}`, { method: "PATCH", body });
    } catch (error) {
      toast(error.message);
    }
    refresh();
  };
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
    h(
      "div",
      { class: "form-actions" },
      h("button", {
        type: "button",
        class: "link-button",
        i18n: "triggersPage.open",
        onclick: () => openSession(`trigger:${item.name}`),
      }),
      item.kind === "hook"
        ? h("button", {
            type: "button",
            testid: "trigger-switch",
            i18n: item.enabled ? "triggersPage.switchOff" : "triggersPage.switchOn",
            onclick: toggle,
          })
        : null,
    ),
  );
}

// A new webhook: its secret is made by the daemon and shown here once, for the sender's settings.
function hookForm(refresh) {
  const status = statusLine("hook-status");
  const made = h("div", { testid: "hook-made" });
  const inputs = {
    name: h("input", { type: "text", required: true, testid: "hook-name", autocomplete: "off" }),
    scheme: h(
      "select",
      { testid: "hook-scheme" },
      ["standard", "github"].map((scheme) => h("option", { value: scheme, i18n: `triggersPage.scheme.${scheme}` })),
    ),
    prompt: h("textarea", { rows: 3, required: true, testid: "hook-prompt" }),
    deliver: h("input", { type: "text", testid: "hook-deliver", autocomplete: "off", value: "web" }),
    tools: h("input", { type: "text", testid: "hook-tools", autocomplete: "off" }),
  };
  const form = h(
    "form",
    { class: "settings-form", novalidate: true, testid: "hook-form" },
    h(
      "fieldset",
      {},
      h("legend", { i18n: "triggersPage.newHook" }),
      h("div", { class: "field-row" }, field("triggersPage.name", inputs.name), field("triggersPage.scheme", inputs.scheme)),
      field("triggersPage.prompt", inputs.prompt, "triggersPage.promptHint"),
      field("triggersPage.deliverTo", inputs.deliver, "triggersPage.deliverHint"),
      field("triggersPage.toolsField", inputs.tools, "triggersPage.toolsHint"),
    ),
    h(
      "div",
      { class: "form-actions" },
      h("button", { type: "submit", class: "primary", testid: "hook-create", i18n: "triggersPage.create" }),
      status.el,
    ),
    made,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!form.reportValidity()) return;
    const tools = inputs.tools.value.split(",").map((name) => name.trim()).filter(Boolean);
    const body = {
      name: inputs.name.value.trim(),
      scheme: inputs.scheme.value,
      prompt: inputs.prompt.value.trim(),
      deliver: inputs.deliver.value.trim() === "none" ? "" : inputs.deliver.value.trim(),
      ...(tools.length ? { tools } : {}),
    };
    status.show("busy", "common.saving");
    try {
      const answer = await api("/api/triggers/hooks", { method: "POST", body });
      status.clear();
      // Shown until the owner says it is copied: the page's next load lists the hook without it.
      made.replaceChildren(
        h("p", { i18n: "triggersPage.made", i18nArgs: { url: `${location.origin}${answer.url}` } }),
        h("code", { class: "secret-once", testid: "hook-secret" }, answer.secret),
        h("button", { type: "button", testid: "hook-copied", i18n: "triggersPage.copied", onclick: refresh }),
      );
    } catch (error) {
      status.show("error", "common.saveFailed", { error: error.message });
    }
  });
  return form;
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
