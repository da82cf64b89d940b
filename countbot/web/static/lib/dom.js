// Element building without ever parsing HTML: every string becomes a text node or an attribute
// value set through the DOM, so no text from a model, a tool or a user can turn into markup.

import { t, translated } from "./i18n.js";

const PROPERTIES = new Set(["value", "checked", "disabled", "hidden", "selected", "open"]);

/**
 * Create an element. Props: `class`, `testid`, `dataset`, `on<event>` listeners, `i18n` (a
 * translation key kept in data-i18n so a language switch re-labels it), `i18nArgs`,
 * `i18nFallback` (the text when the language has no such key: a skill's own description),
 * `i18nAttrs` ({attribute: key}); anything else is set as an attribute.
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "testid") el.dataset.testid = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key === "i18n") label(el, value, props.i18nArgs, props.i18nFallback);
    else if (key === "i18nArgs" || key === "i18nFallback") continue;
    else if (key === "i18nAttrs") labelAttrs(el, value);
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (PROPERTIES.has(key)) el[key] = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

/** Append strings (as text), nodes and (nested) arrays of them; null and false are skipped. */
export function append(parent, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

/**
 * Give an element translated text that follows language switches; `fallback` is shown in a
 * language without `key` (text that came from a file rather than from the tables).
 */
export function label(el, key, args, fallback) {
  el.dataset.i18n = key;
  if (args) el.dataset.i18nArgs = JSON.stringify(args);
  else delete el.dataset.i18nArgs;
  if (fallback !== undefined) el.dataset.i18nFallback = fallback;
  else delete el.dataset.i18nFallback;
  el.textContent = labelText(el);
  return el;
}

function labelText(el) {
  const key = el.dataset.i18n;
  if (el.dataset.i18nFallback !== undefined) return translated(key, el.dataset.i18nFallback);
  return t(key, el.dataset.i18nArgs ? JSON.parse(el.dataset.i18nArgs) : undefined);
}

/** Translated attributes (placeholder, title, aria-label) that follow language switches; those
 * not named keep theirs (a changed placeholder must not freeze the aria-label's language). */
export function labelAttrs(el, attrs) {
  const kept = el.dataset.i18nAttrs ? JSON.parse(el.dataset.i18nAttrs) : {};
  el.dataset.i18nAttrs = JSON.stringify({ ...kept, ...attrs });
  for (const [attr, key] of Object.entries(attrs)) el.setAttribute(attr, t(key));
  return el;
}

/** Re-apply every data-i18n label under `root` after the language changed. */
export function translateTree(root) {
  for (const el of root.querySelectorAll("[data-i18n]")) el.textContent = labelText(el);
  for (const el of root.querySelectorAll("[data-i18n-attrs]")) {
    for (const [attr, key] of Object.entries(JSON.parse(el.dataset.i18nAttrs))) {
      el.setAttribute(attr, t(key));
    }
  }
}

/** Call `fn` once calls have paused for `ms`, with the latest arguments (search boxes). */
export function debounce(fn, ms) {
  let timer = 0;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}
