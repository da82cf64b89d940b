// Setting a channel up from the browser: its fields in words (a token typed here is stored in
// secrets.yaml, never shown again; a setting with fixed values is a list to choose from), on/off,
// who may write to it, and the platform's setup steps beside them. Saving restarts that channel,
// and the form waits for the outcome: connected, or why not, said where the Save button is.

import { api } from "../lib/api.js";
import { h } from "../lib/dom.js";
import { translated } from "../lib/i18n.js";
import { field, statusLine } from "./panel.js";

const MASK = "********";
// Fields the form leaves out: tuning that belongs in config.yaml, not on a first setup.
const HIDDEN = new Set(["enabled", "allow_from", "stream_edit_interval", "rate_limit_per_minute"]);

// How long a saved channel is watched for the outcome of its first connection.
const SETTLE_MS = 20000;

function control(key, value, choices) {
  const testid = `channel-field-${key}`;
  if (choices) {
    const options = choices.map((choice) =>
      h("option", { value: choice, i18n: `channelSetup.choice.${choice}`, i18nFallback: choice }),
    );
    const select = h("select", { testid }, options);
    select.value = value ?? choices[0];
    return select;
  }
  if (typeof value === "boolean") return h("input", { type: "checkbox", checked: value, testid });
  if (typeof value === "number") return h("input", { type: "number", value, step: "any", testid });
  if (Array.isArray(value)) return h("input", { type: "text", value: value.join(", "), testid });
  const secret = value === MASK;
  return h("input", {
    type: secret || /token|secret|password|key/.test(key) ? "password" : "text",
    value: secret ? "" : (value ?? ""),
    placeholder: secret ? MASK : "",
    autocomplete: "off",
    testid,
  });
}

function valueOf(input, original) {
  if (input.type === "checkbox") return input.checked;
  if (input.type === "number") return input.value === "" ? null : Number(input.value);
  if (Array.isArray(original)) {
    return input.value
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
  }
  // A field that was unset stays unset unless something was typed into it.
  return original === null && input.value === "" ? null : input.value;
}

/** The form for `channel` (one entry of GET /api/channels); `onSaved()` reloads the table. */
export function channelForm(channel, onSaved) {
  const settings = channel.settings || {};
  const enabled = h("input", { type: "checkbox", checked: Boolean(channel.enabled), testid: "channel-enabled" });
  const allowed = h("input", {
    type: "text",
    value: (settings.allow_from || []).join(", "),
    testid: "channel-allow-from",
  });
  const choices = channel.choices || {};
  const inputs = Object.entries(settings)
    .filter(([key]) => !HIDDEN.has(key))
    .map(([key, value]) => ({ key, value, input: control(key, value, choices[key]) }));
  const status = statusLine("channel-status");
  const form = h(
    "form",
    { class: "settings-form channel-form", testid: "channel-form", dataset: { channel: channel.name } },
    h(
      "fieldset",
      {},
      h("legend", { i18n: `channels.kind.${channel.name}` }),
      h("p", { class: "field-hint setup-steps", i18n: `channelSetup.steps.${channel.name}`, i18nFallback: "" }),
      h("label", { class: "switch" }, enabled, h("span", { i18n: "channelSetup.enabled" })),
      field("channelSetup.allowFrom", allowed, "channelSetup.allowFromHint"),
      inputs.map(({ key, input }) =>
        h(
          "label",
          { class: "field" },
          h("span", { class: "field-label", i18n: `channelSetup.field.${key}`, i18nFallback: key }),
          input,
          h("span", { class: "field-hint", i18n: `channelSetup.help.${key}`, i18nFallback: "" }),
        ),
      ),
    ),
    h(
      "div",
      { class: "form-actions" },
      h("button", { type: "submit", class: "primary", testid: "channel-save", i18n: "channelSetup.save" }),
      status.el,
    ),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const change = { enabled: enabled.checked, allow_from: valueOf(allowed, []) };
    for (const { key, value, input } of inputs) {
      // An untouched secret stays as it is; any other field is sent as shown.
      if (value === MASK && input.value === "") continue;
      change[key] = valueOf(input, value);
    }
    status.show("busy", "common.saving");
    try {
      await api(`/api/channels/${encodeURIComponent(channel.name)}`, {
        method: "PUT",
        body: { settings: change },
      });
    } catch (error) {
      status.show("error", "common.saveFailed", { error: error.message });
      return;
    }
    onSaved();
    status.show("busy", "channelSetup.connecting");
    const [kind, key, args] = await outcome(channel.name);
    status.show(kind, key, args);
  });
  return form;
}

/** What became of a channel just saved, as a status line: [kind, key, args]. */
async function outcome(name) {
  const until = Date.now() + SETTLE_MS;
  for (;;) {
    let now;
    try {
      const data = await api("/api/channels");
      now = (data.channels || []).find((c) => c.name === name);
    } catch (error) {
      return ["error", "common.loadFailed", { error: error.message }];
    }
    if (!now) return ["ok", "common.saved"];
    const why = { detail: problemWords(now) };
    if (now.state === "running") return ["ok", "channelSetup.connected", { bot: now.bot || "" }];
    if (now.state === "disabled") return ["ok", "channelSetup.savedOff"];
    if (now.state === "rejected") return ["error", "channelSetup.rejected", why];
    if (now.state === "misconfigured") return ["error", "channelSetup.misconfigured", why];
    if (now.state === "restarting") return ["error", "channelSetup.failing", why];
    if (Date.now() > until) return ["busy", "channelSetup.stillConnecting"];
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Why a channel is not running, in the page's language where the reason is a known one. */
export function problemWords(channel) {
  const key = `channels.problem.${channel.problem}`;
  return channel.problem ? translated(key, channel.detail || "") : channel.detail || "";
}
