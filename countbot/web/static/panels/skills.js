// Skills: what each one does, whether its requirements are met, and a switch to turn it off.

import { api } from "../lib/api.js";
import { h, label } from "../lib/dom.js";
import { toast } from "../lib/toast.js";
import { loadPanel } from "./panel.js";

export function renderSkills(root) {
  const load = async () => {
    const [skills, mcp] = await Promise.all([api("/api/skills"), api("/api/mcp")]);
    return { ...skills, servers: mcp.servers || [] };
  };
  return loadPanel(root, "skills.title", load, (data) =>
    h("div", {}, skillList(data), mcpSection(data.servers)),
  );
}

function skillList(data) {
  const skills = data.skills || [];
  if (!skills.length) return h("p", { class: "muted", i18n: "skills.none" });
  return h("ul", { class: "card-list" }, skills.map(skillCard));
}

// MCP servers: their state, the tools they gave the assistant, and why the last start failed.
function mcpSection(servers) {
  const body = servers.length
    ? h("ul", { class: "card-list" }, servers.map(serverCard))
    : h("p", { class: "muted", i18n: "mcp.none" });
  return h("section", { testid: "mcp-servers" }, h("h3", { i18n: "mcp.title" }), body);
}

function serverCard(server) {
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
  );
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
