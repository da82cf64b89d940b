// What this install can do, on the first page a user sees: the model, memory by meaning,
// documents, voice notes and the sandbox, each on or off with how to turn it on (the list
// `countbot doctor` prints too).

import { api } from "../lib/api.js";
import { h } from "../lib/dom.js";

/** Fill `list` from the daemon; an unreachable daemon leaves it as it was. */
export async function showCapabilities(list) {
  let found;
  try {
    found = (await api("/api/capabilities")).capabilities;
  } catch {
    return; // the connection indicator already says the daemon is unreachable
  }
  list.replaceChildren(...found.map(row));
  list.hidden = false;
}

function row(capability) {
  const { key, on, detail, hint } = capability;
  return h(
    "li",
    { class: "capability", testid: `capability-${key}`, dataset: { on: String(on) } },
    h("span", { class: "capability-mark", "aria-hidden": "true" }, on ? "✓" : "○"),
    h("strong", { i18n: `capability.${key}` }),
    " ",
    h("span", { class: "capability-state", i18n: on ? "capability.on" : "capability.off" }),
    h("span", { class: "capability-detail" }, detail),
    hint ? h("code", { class: "capability-hint" }, hint) : null,
  );
}
