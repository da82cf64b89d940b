// Settings: the model and the persona. The API key is never shown; it is sent only when the
// user typed a new one or asked to remove it.

import { api } from "../lib/api.js";
import { h, label } from "../lib/dom.js";
import { toast } from "../lib/toast.js";
import { field, loadPanel, statusLine } from "./panel.js";
import { moreSettings, saveResult } from "./settingsMore.js";

const MASK = "********";

export function renderSettings(root) {
  return loadPanel(root, "settings.title", () => api("/api/settings"), (data) => settingsForm(data));
}

function text(value, props = {}) {
  return h("input", { type: "text", value: value ?? "", autocomplete: "off", ...props });
}

function presetList(data) {
  return (data.persona_presets || []).map((preset) =>
    typeof preset === "string" ? { name: preset, description: "" } : preset,
  );
}

// The daemon's sandbox detail is built from these phrases (countbot/execution/sandbox.py); each is
// shown in the reader's language where it has a translation, the rest (paths, errors) as is.
const SANDBOX_PHRASES = [
  ["every command asks, and each stdio MCP server before it starts", "settings.sandboxAsks"],
  ["exec refuses every command", "settings.sandboxRefuses"],
  ["off in tools.exec.sandbox", "settings.sandboxOff"],
  ["bubblewrap (bwrap) is not installed", "settings.sandboxNoBwrap"],
  ["network on", "settings.sandboxNetwork"],
  ["no network", "settings.sandboxNoNetwork"],
];

function sandboxDetail(detail) {
  const pieces = [];
  let rest = detail || "";
  for (;;) {
    const found = SANDBOX_PHRASES.map(([phrase, key]) => ({ at: rest.indexOf(phrase), phrase, key }))
      .filter((f) => f.at >= 0)
      .sort((a, b) => a.at - b.at)[0];
    if (!found) break;
    pieces.push(rest.slice(0, found.at), h("span", { i18n: found.key, i18nFallback: found.phrase }));
    rest = rest.slice(found.at + found.phrase.length);
  }
  pieces.push(rest);
  return pieces;
}

/** Whether `exec` runs in the sandbox on this machine, and if not, why; "Check again" looks
 *  anew (after installing bubblewrap) without a restart. */
function sandboxSection(sandbox) {
  if (!sandbox) return null;
  const state = h("p", {});
  const show = (status) =>
    state.replaceChildren(
      h("span", {
        class: status.active ? "badge" : "badge warn",
        testid: "settings-sandbox-state",
        i18n: status.active ? "settings.sandboxActive" : "settings.sandboxInactive",
      }),
      " ",
      h("span", { class: "field-hint", testid: "settings-sandbox-detail" }, sandboxDetail(status.detail)),
    );
  show(sandbox);
  const again = h("button", {
    type: "button",
    class: "small",
    testid: "settings-sandbox-probe",
    i18n: "settings.sandboxProbe",
  });
  again.addEventListener("click", async () => {
    again.disabled = true;
    try {
      show(await api("/api/settings/sandbox/probe", { method: "POST" }));
    } catch (error) {
      toast(error.message);
    } finally {
      again.disabled = false;
    }
  });
  return h(
    "fieldset",
    { testid: "settings-sandbox" },
    h("legend", { i18n: "settings.sandbox" }),
    state,
    h("p", { class: "field-hint", i18n: "settings.sandboxHint", i18nArgs: { mode: sandbox.mode } }),
    again,
  );
}

/** The models CountBot runs itself: "Use" puts local/NAME in the model field (saved with the
 *  form); a model not pulled yet shows the command that pulls it. */
function localModelsSection(catalogue, nameInput) {
  if (!catalogue) return null;
  const rows = catalogue.models.map((m) =>
    h(
      "li",
      { testid: `local-model-${m.name}` },
      h("strong", {}, m.title),
      ` · ${(m.size / 1e6).toFixed(0)} MB · ${m.licence} · `,
      h("span", { i18n: `settings.localNote.${m.name}`, i18nFallback: m.note }),
      " ",
      m.pulled && catalogue.runnable
        ? h("button", {
            type: "button",
            class: "small",
            testid: `local-model-use-${m.name}`,
            i18n: "settings.localUse",
            onclick: () => {
              nameInput.value = m.model_name;
            },
          })
        : h("code", {}, `countbot models pull ${m.name}`),
    ),
  );
  return h(
    "fieldset",
    { testid: "settings-local-models" },
    h("legend", { i18n: "settings.localModels" }),
    h("p", { class: "field-hint", i18n: catalogue.runnable ? "settings.localHint" : "settings.localInstall" }),
    h("ul", { class: "local-models" }, rows),
  );
}

/** The form for `data` (GET /api/settings); `saved` shows that it is the result of a save. */
function settingsForm(data, saved = false) {
  const model = data.model || {};
  const persona = data.persona || {};
  const presets = presetList(data);
  const keySet = model.api_key === MASK || Boolean(model.api_key);
  let keyChange = null; // null: unchanged; "": remove; otherwise the new key

  const inputs = {
    name: text(model.name, { testid: "settings-model-name", required: true }),
    apiBase: text(model.api_base, {
      type: "url",
      i18nAttrs: { placeholder: "settings.apiBaseDefault" },
    }),
    apiKey: h("input", {
      type: "password",
      testid: "settings-api-key",
      autocomplete: "new-password",
      i18nAttrs: { placeholder: keySet ? "settings.apiKeySet" : "settings.apiKeyNone" },
    }),
    temperature: h("input", {
      type: "number",
      min: 0,
      max: 2,
      step: 0.1,
      value: model.temperature ?? 0.7,
      testid: "settings-temperature",
    }),
    maxTokens: h("input", {
      type: "number",
      min: 1,
      step: 1,
      value: model.max_tokens ?? 4096,
      testid: "settings-max-tokens",
    }),
    fallbacks: text((model.fallbacks || []).join(", ")),
    utility: text(model.utility, { testid: "settings-utility" }),
    economy: text(model.economy, { testid: "settings-economy" }),
    preset: h(
      "select",
      { testid: "settings-preset" },
      presets.map((p) =>
        h("option", {
          value: p.name,
          selected: p.name === persona.preset,
          i18n: `persona.name.${p.name}`,
          i18nFallback: p.name,
        }),
      ),
    ),
    personaName: text(persona.name, { i18nAttrs: { placeholder: "settings.fromPreset" } }),
    userAddress: text(persona.user_address, { i18nAttrs: { placeholder: "settings.fromPreset" } }),
    language: text(persona.language, { i18nAttrs: { placeholder: "settings.fromPreset" } }),
    personality: h("textarea", {
      rows: 4,
      value: persona.personality ?? "",
      i18nAttrs: { placeholder: "settings.fromPreset" },
    }),
  };
  const presetHint = h("span", { class: "field-hint", testid: "settings-preset-hint" });
  const describePreset = () => {
    const preset = presets.find((p) => p.name === inputs.preset.value);
    if (preset) label(presetHint, `persona.desc.${preset.name}`, undefined, preset.description);
    else {
      delete presetHint.dataset.i18n;
      presetHint.textContent = "";
    }
  };
  inputs.preset.addEventListener("change", describePreset);
  describePreset();

  const keyState = h("span", { class: "field-hint" });
  const removeKey = h("button", {
    type: "button",
    class: "small",
    hidden: !keySet,
    testid: "settings-api-key-remove",
    i18n: "settings.apiKeyRemove",
    onclick: () => {
      keyChange = "";
      inputs.apiKey.value = "";
      label(keyState, "settings.apiKeyWillRemove");
    },
  });
  inputs.apiKey.addEventListener("input", () => {
    keyChange = inputs.apiKey.value || null;
    keyState.replaceChildren();
    delete keyState.dataset.i18n;
  });

  const status = statusLine("settings-status");
  const more = moreSettings(data);
  const form = h(
    "form",
    { class: "settings-form", novalidate: true },
    h(
      "fieldset",
      {},
      h("legend", { i18n: "settings.model" }),
      field("settings.modelName", inputs.name, "settings.modelNameHint"),
      field("settings.apiBase", inputs.apiBase),
      h(
        "div",
        { class: "field" },
        h("span", { class: "field-label", i18n: "settings.apiKey" }),
        h("div", { class: "inline-controls" }, inputs.apiKey, removeKey),
        keyState,
      ),
      h(
        "div",
        { class: "field-row" },
        field("settings.temperature", inputs.temperature),
        field("settings.maxTokens", inputs.maxTokens),
      ),
      field("settings.fallbacks", inputs.fallbacks, "settings.fallbacksHint"),
      field("settings.utility", inputs.utility, "settings.utilityHint"),
      field("settings.economy", inputs.economy, "settings.economyHint"),
      modelStatus(data.model_status),
    ),
    localModelsSection(data.local_models, inputs.name),
    h(
      "fieldset",
      {},
      h("legend", { i18n: "settings.persona" }),
      h(
        "label",
        { class: "field" },
        h("span", { class: "field-label", i18n: "settings.preset" }),
        inputs.preset,
        presetHint,
      ),
      field("settings.personaName", inputs.personaName),
      field("settings.userAddress", inputs.userAddress),
      field("settings.language", inputs.language),
      field("settings.personality", inputs.personality),
    ),
    more.el,
    sandboxSection(data.sandbox),
    h(
      "div",
      { class: "form-actions" },
      h("button", { type: "submit", class: "primary", testid: "settings-save", i18n: "common.save" }),
      status.el,
    ),
    saved ? saveResult(data) : null,
  );

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!form.reportValidity()) return;
    const orNull = (input) => input.value.trim() || null;
    const body = {
      model: {
        name: inputs.name.value.trim(),
        api_base: orNull(inputs.apiBase),
        temperature: Number(inputs.temperature.value),
        max_tokens: Number.parseInt(inputs.maxTokens.value, 10),
        fallbacks: inputs.fallbacks.value
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean),
        utility: inputs.utility.value.trim(),
        economy: inputs.economy.value.trim(),
      },
      persona: {
        preset: inputs.preset.value,
        name: orNull(inputs.personaName),
        user_address: orNull(inputs.userAddress),
        language: orNull(inputs.language),
        personality: orNull(inputs.personality),
      },
    };
    if (keyChange !== null) body.model.api_key = keyChange;
    Object.assign(body, more.body());
    try {
      status.show("busy", "settings.checkingModel");
      form.replaceWith(settingsForm(await api("/api/settings", { method: "PUT", body }), true));
    } catch (error) {
      status.show("error", "common.saveFailed", { error: error.message });
    }
  });
  if (saved) status.show("ok", "common.saved");
  // "Saved" describes the form as it was saved; any edit (valid or not) makes it stale.
  form.addEventListener("input", () => status.clear());
  return form;
}

/** Read-only: the context window requests are fitted to, and models resting after failures. */
function modelStatus(status) {
  if (!status) return null;
  return h(
    "div",
    { class: "field muted", testid: "settings-model-status" },
    h("p", { i18n: "settings.contextWindow", i18nArgs: { tokens: status.context_window.toLocaleString() } }),
    (status.cooldowns || []).map((c) =>
      h("p", { i18n: "settings.cooldown", i18nArgs: { model: c.model, seconds: c.seconds_left, reason: c.reason } }),
    ),
  );
}
