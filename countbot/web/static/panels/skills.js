// Skills: what each one does, whether its requirements are met, and a switch to turn it off.

import { api } from "../lib/api.js";
import { h, label } from "../lib/dom.js";
import { t } from "../lib/i18n.js";
import { toast } from "../lib/toast.js";
import { field, loadPanel, statusLine } from "./panel.js";

export function renderSkills(root) {
  const load = async () => {
    const [skills, mcp] = await Promise.all([api("/api/skills"), api("/api/mcp")]);
    return { ...skills, servers: mcp.servers || [] };
  };
  const reload = () => renderSkills(root);
  return loadPanel(root, "skills.title", load, (data) =>
    h("div", {}, skillList(data), mcpSection(data.servers, reload)),
  );
}

function skillList(data) {
  const skills = data.skills || [];
  if (!skills.length) return h("p", { class: "muted", i18n: "skills.none" });
  return h("ul", { class: "card-list" }, skills.map(skillCard));
}

// MCP servers: their state, the tools they gave the assistant, and why the last start failed;
// each can be switched off or removed, and a new one tested and added (written to config.yaml,
// followed by the running daemon at once).
function mcpSection(servers, reload) {
  const body = servers.length
    ? h("ul", { class: "card-list" }, servers.map((server) => serverCard(server, reload)))
    : h("p", { class: "muted", i18n: "mcp.none" });
  // A server on its way up is looked at again until it settles.
  if (servers.some((server) => ["connecting", "restarting"].includes(server.state) && !server.last_error)) {
    setTimeout(() => document.contains(body) && reload(), 1000);
  }
  return h("section", { testid: "mcp-servers" }, h("h3", { i18n: "mcp.title" }), body, addServerForm(reload));
}

/** The form that tests and adds a server: a command (stdio) or a URL (streamable HTTP). */
function addServerForm(reload) {
  const input = (testid, placeholder) => h("input", { type: "text", testid, autocomplete: "off", i18nAttrs: placeholder ? { placeholder } : undefined });
  const name = input("mcp-add-name");
  const command = input("mcp-add-command", "mcp.commandPlaceholder");
  const args = input("mcp-add-args", "mcp.argsPlaceholder");
  const url = input("mcp-add-url", "mcp.urlPlaceholder");
  const env = h("textarea", { rows: 2, testid: "mcp-add-env", i18nAttrs: { placeholder: "mcp.envPlaceholder" } });
  const status = statusLine("mcp-add-status");
  const definition = () => {
    const body = { name: name.value.trim() };
    if (command.value.trim()) {
      body.command = command.value.trim();
      body.args = args.value.trim() ? args.value.trim().split(/\s+/) : [];
    }
    if (url.value.trim()) body.url = url.value.trim();
    const pairs = env.value.split("\n").map((line) => line.trim()).filter(Boolean);
    if (pairs.length) {
      body.env = Object.fromEntries(pairs.map((line) => [line.split("=")[0].trim(), line.slice(line.indexOf("=") + 1)]));
    }
    return body;
  };
  const test = h("button", { type: "button", testid: "mcp-add-test", i18n: "mcp.test" });
  test.addEventListener("click", async () => {
    status.show("busy", "mcp.testing");
    try {
      const row = await api("/api/mcp/test", { method: "POST", body: definition() });
      if (row.state === "ready") status.show("ok", "mcp.testOk", { items: row.tools.join(", ") || "—" });
      else status.show("error", "mcp.testFailed", { error: row.last_error || row.state });
    } catch (error) {
      status.show("error", "mcp.testFailed", { error: error.message });
    }
  });
  const form = h(
    "form",
    { class: "settings-form", testid: "mcp-add-form", novalidate: true },
    h(
      "fieldset",
      {},
      h("legend", { i18n: "mcp.add" }),
      field("mcp.name", name, "mcp.nameHint"),
      field("mcp.command", command, "mcp.commandHint"),
      field("mcp.args", args),
      field("mcp.url", url, "mcp.urlHint"),
      field("mcp.env", env, "mcp.envHint"),
    ),
    h(
      "div",
      { class: "form-actions" },
      test,
      h("button", { type: "submit", class: "primary", testid: "mcp-add-save", i18n: "mcp.addSave" }),
      status.el,
    ),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    status.show("busy", "common.saving");
    try {
      await api("/api/mcp/servers", { method: "POST", body: definition() });
      reload();
    } catch (error) {
      status.show("error", "common.saveFailed", { error: error.message });
    }
  });
  return form;
}

function serverCard(server, reload) {
  const toggle = h("input", {
    type: "checkbox",
    role: "switch",
    testid: "mcp-toggle",
    checked: Boolean(server.enabled),
    i18nAttrs: { "aria-label": "mcp.enabled" },
  });
  toggle.addEventListener("change", () =>
    change(toggle, reload, { method: "PATCH", body: { enabled: toggle.checked } }, server.name),
  );
  const remove = h("button", { type: "button", class: "small", testid: "mcp-remove", i18n: "mcp.remove" });
  remove.addEventListener("click", () => {
    if (confirm(t("mcp.confirmRemove", { name: server.name }))) {
      change(remove, reload, { method: "DELETE" }, server.name);
    }
  });
  const ready = server.state === "ready";
  const skipped = Object.entries(server.skipped || {}).map(([tool, why]) => `${tool}: ${why}`);
  return h(
    "li",
    { class: "card", testid: "mcp-server", dataset: { server: server.name, state: server.state } },
    h(
      "div",
      { class: "card-head" },
      h("strong", {}, server.name),
      h("span", { class: "badge" }, server.transport),
      badge(`mcp.state.${server.state}`, ready ? "" : "warn"),
      server.approval === "always" ? badge("mcp.approval") : null,
      h("label", { class: "switch" }, toggle, h("span", { class: "muted", i18n: "mcp.enabled" })),
    ),
    h("p", { class: "muted" }, server.target || ""),
    server.tools.length
      ? h("p", { i18n: "mcp.tools", i18nArgs: { items: server.tools.join(", ") } })
      : null,
    skipped.length
      ? h("p", { class: "muted", i18n: "mcp.skipped", i18nArgs: { items: skipped.join("; ") } })
      : null,
    server.last_error
      ? h("p", { class: "muted", testid: "mcp-error", i18n: "mcp.error", i18nArgs: { error: server.last_error } })
      : null,
    h("div", { class: "form-actions" }, remove),
  );
}

/** Send a change of one server; the section is drawn again from what the daemon says. */
async function change(control, reload, request, name) {
  control.disabled = true;
  try {
    await api(`/api/mcp/servers/${encodeURIComponent(name)}`, request);
  } catch (error) {
    toast(error.message);
  }
  reload();
}

function badge(key, kind = "") {
  return h("span", { class: `badge ${kind}`, i18n: key });
}

/** A shipped skill's description in the UI's language; a workspace skill's as its file says. */
function description(skill) {
  if (skill.source !== "builtin") return h("p", {}, skill.description);
  return h("p", { i18n: `skill.desc.${skill.name}`, i18nFallback: skill.description });
}

function skillCard(skill) {
  const toggle = h("input", {
    type: "checkbox",
    role: "switch",
    testid: "skill-toggle",
    dataset: { skill: skill.name },
    checked: Boolean(skill.enabled),
    i18nAttrs: { "aria-label": "skills.enabled" },
  });
  const state = h("span", { class: "muted" });
  const showState = () => label(state, toggle.checked ? "skills.enabled" : "skills.disabled");
  showState();
  toggle.addEventListener("change", async () => {
    const enabled = toggle.checked;
    toggle.disabled = true;
    try {
      await api(`/api/skills/${encodeURIComponent(skill.name)}`, {
        method: "PUT",
        body: { enabled },
      });
    } catch (error) {
      toggle.checked = !enabled;
      toast(error.message);
    }
    toggle.disabled = false;
    showState();
  });
  const missing = skill.missing || [];
  return h(
    "li",
    { class: "card", testid: "skill-item", dataset: { skill: skill.name } },
    h(
      "div",
      { class: "card-head" },
      h("strong", {}, skill.name),
      skill.always ? badge("skills.always") : null,
      skill.source ? badge(`skills.source.${skill.source}`) : null,
      skill.available === false ? badge("skills.unavailable", "warn") : null,
      h("label", { class: "switch" }, toggle, state),
    ),
    skill.description ? description(skill) : null,
    missing.length
      ? h("p", { class: "muted", i18n: "skills.missing", i18nArgs: { items: missing.join(", ") } })
      : null,
    missing.length && (skill.install || []).length
      ? h("p", { class: "muted", testid: "skill-install", i18n: "skills.install", i18nArgs: { items: skill.install.join("; ") } })
      : null,
  );
}
