// The REST client: same-origin cookies, JSON both ways, and a trip to /login on any 401.

import { t, translated } from "./i18n.js";

export class ApiError extends Error {
  /** `data`: the error response's JSON body (a 409 carries the current state). */
  constructor(status, message, data = null) {
    super(message);
    this.status = status;
    this.data = data;
  }
}

const STATE_CHANGING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** Call the daemon's API; resolves to the parsed JSON (null for 204), rejects with ApiError. */
export async function api(path, { method = "GET", body, headers: extra = {} } = {}) {
  const headers = { Accept: "application/json", ...extra };
  // The JSON content type doubles as a CSRF guard: a cross-site form cannot send it.
  if (STATE_CHANGING.has(method)) headers["Content-Type"] = "application/json";
  const init = { method, headers, credentials: "same-origin" };
  if (body !== undefined) init.body = JSON.stringify(body);
  let response;
  try {
    response = await fetch(path, init);
  } catch {
    // The browser's own words ("Failed to fetch") say nothing about what to do.
    throw new ApiError(0, t("common.unreachable"));
  }
  if (response.status === 401) {
    goToLogin();
    throw new ApiError(401, "authentication required");
  }
  if (response.status === 204) return null;
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    throw new ApiError(response.status, errorText(response.status, data), data);
  }
  return data;
}

/** What went wrong, in the page's language where the daemon named it by a code it knows. */
function errorText(status, data) {
  if (data?.code && translated(`error.${data.code}`, null) !== null) {
    return t(`error.${data.code}`, data.args || {});
  }
  return data?.error || `HTTP ${status}`;
}

/** Build a query string from the non-empty values of `params`. */
export function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

export function goToLogin() {
  if (location.pathname !== "/login") location.assign("/login");
}
