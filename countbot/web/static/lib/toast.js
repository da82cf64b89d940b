// Short-lived notices in a corner, for failures that have no better place on screen.

import { h } from "./dom.js";
import { t } from "./i18n.js";

const VISIBLE_MS = 6000;

/** Show `text` (already translated or from the server) for a few seconds. */
export function toast(text, kind = "error") {
  const box = document.getElementById("toasts");
  const item = h("div", { class: `toast toast-${kind}`, role: "status", testid: "toast" }, text);
  box.append(item);
  setTimeout(() => item.remove(), VISIBLE_MS);
}

/** Like `toast`, for a translation key. */
export function toastKey(key, args, kind = "error") {
  toast(t(key, args), kind);
}
