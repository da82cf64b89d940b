// The UI's language: one table per language, chosen once (saved choice, else the browser's
// language) and switchable at run time; listeners re-label what is on screen.

import en from "../i18n/en.js";
import zhCN from "../i18n/zh-CN.js";

export const LANGUAGES = { en, "zh-CN": zhCN };
const STORAGE_KEY = "countbot.lang";
const listeners = new Set();
let current = initialLanguage();

function initialLanguage() {
  const saved = localStorage.getItem(STORAGE_KEY);
  if (saved && saved in LANGUAGES) return saved;
  return (navigator.language || "en").toLowerCase().startsWith("zh") ? "zh-CN" : "en";
}

/** The translation of `key`, with `{name}` placeholders filled from `args`. */
export function t(key, args) {
  const text = LANGUAGES[current][key] ?? en[key] ?? key;
  if (!args) return text;
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in args ? String(args[name]) : whole));
}

/** The current language's text for `key` if it has one, else `fallback` (text from a file). */
export function translated(key, fallback) {
  return LANGUAGES[current][key] ?? fallback;
}

export function getLang() {
  return current;
}

/** Switch language, remember it, and tell listeners so they re-label the screen. */
export function setLang(lang) {
  if (!(lang in LANGUAGES) || lang === current) return;
  current = lang;
  localStorage.setItem(STORAGE_KEY, lang);
  document.documentElement.lang = lang;
  for (const fn of listeners) fn(lang);
}

export function onLangChange(fn) {
  listeners.add(fn);
}
