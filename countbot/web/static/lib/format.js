// Numbers, money, times and durations in the UI's current language.

import { getLang } from "./i18n.js";

/** A Date from Unix seconds (the API's timestamps) or an ISO string. */
export function toDate(ts) {
  if (typeof ts === "number") return new Date(ts * 1000);
  const parsed = Date.parse(ts);
  return Number.isNaN(parsed) ? null : new Date(parsed);
}

export function formatTime(ts) {
  const date = toDate(ts);
  if (!date) return "";
  const sameDay = date.toDateString() === new Date().toDateString();
  const options = sameDay
    ? { hour: "2-digit", minute: "2-digit" }
    : { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" };
  return new Intl.DateTimeFormat(getLang(), options).format(date);
}

export function formatNumber(n) {
  return new Intl.NumberFormat(getLang()).format(Number(n) || 0);
}

/**
 * A cost in US dollars (what providers bill in; no conversion is guessed). The plain "$" sign in
 * every language: Chinese number formatting would otherwise write "US$".
 */
export function formatCost(usd) {
  const value = Number(usd) || 0;
  const digits = value !== 0 && Math.abs(value) < 0.01 ? 4 : 2;
  return new Intl.NumberFormat(getLang(), {
    style: "currency",
    currency: "USD",
    currencyDisplay: "narrowSymbol",
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  }).format(value);
}

export function formatDuration(ms) {
  const value = Number(ms) || 0;
  if (value < 1000) return `${Math.round(value)} ms`;
  return `${(value / 1000).toFixed(value < 10000 ? 2 : 1)} s`;
}
