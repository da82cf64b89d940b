// Skills: what each one does, whether its requirements are met, and a switch to turn it off.

import { api } from "../lib/api.js";
import { h, label } from "../lib/dom.js";
import { toast } from "../lib/toast.js";
import { loadPanel } from "./panel.js";

export function renderSkills(root) {
  return loadPanel(root, "skills.title", () => api("/api/skills"), skillList);
}

function skillList(data) {
  const skills = data.skills || [];
  if (!skills.length) return h("p", { class: "muted", i18n: "skills.none" });
  return h("ul", { class: "card-list" }, skills.map(skillCard));
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
  );
}
