// The commands the user answered "Always allow" to, each with a button that revokes the rule
// (the command asks again next time). Shown on the Audit page, beside what was run.

import { api } from "../lib/api.js";
import { h } from "../lib/dom.js";
import { formatTime } from "../lib/format.js";
import { toast } from "../lib/toast.js";
import { loadPanel } from "./panel.js";

export function renderAllowed(root) {
  const refresh = () => loadPanel(root, null, () => api("/api/approvals"), (data) => ruleList(data, refresh));
  return refresh();
}

function ruleList(data, refresh) {
  const rules = data.allowed || [];
  const title = h("h3", { i18n: "allowed.title" });
  if (!rules.length) return h("section", { class: "allowed" }, title, h("p", { class: "muted", i18n: "allowed.none" }));
  const revoke = async (rule) => {
    try {
      await api("/api/approvals/allowed", { method: "DELETE", body: { agent: rule.agent, tool: rule.tool, key: rule.key } });
    } catch (error) {
      toast(error.message);
    }
    refresh();
  };
  return h(
    "section",
    { class: "allowed" },
    title,
    h(
      "ul",
      { class: "allowed-list" },
      rules.map((rule) =>
        h(
          "li",
          { testid: "allowed-rule" },
          h("code", {}, `${rule.agent === "main" ? "" : `${rule.agent} · `}${rule.tool}: ${rule.key}`),
          h("span", { class: "muted", i18n: "allowed.by", i18nArgs: { by: rule.allowed_by, when: formatTime(rule.created_at) } }),
          h("button", { type: "button", class: "small danger", i18n: "allowed.revoke", testid: "allowed-revoke", onclick: () => revoke(rule) }),
        ),
      ),
    ),
  );
}
