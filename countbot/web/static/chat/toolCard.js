// A tool call shown as a collapsible card: name, arguments, result, status and duration.

import { h, label } from "../lib/dom.js";
import { formatDuration } from "../lib/format.js";

const PREVIEW_CHARS = 60;
const SHOWN_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
const STATUSES = new Set(["running", "missing", "ok", "error", "timeout", "cancelled", "skipped"]);

/** Arguments as readable text: pretty JSON when they parse, else the raw string. */
function prettyArguments(args) {
  if (typeof args !== "string") return JSON.stringify(args ?? {}, null, 2);
  try {
    return JSON.stringify(JSON.parse(args), null, 2);
  } catch {
    return args;
  }
}

/** The first short string argument, so a collapsed card still says what it worked on. */
function preview(args) {
  let value = args;
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      return value.slice(0, PREVIEW_CHARS);
    }
  }
  const first = Object.values(value ?? {}).find((v) => typeof v === "string" && v.trim());
  if (!first) return "";
  const line = first.split("\n")[0];
  return line.length > PREVIEW_CHARS ? `${line.slice(0, PREVIEW_CHARS)}…` : line;
}

/** Label `el` with a tool status, also one this UI does not know yet. */
export function statusLabel(el, status) {
  if (STATUSES.has(status)) return label(el, `tool.status.${status}`);
  return label(el, "tool.status.other", { status });
}

export class ToolCard {
  /** status: "running" while live, "missing" when history has no result, else the result's. */
  constructor({ id, name, args, status = "running" }) {
    this.status = h("span", { class: "tool-status" });
    this.duration = h("span", { class: "tool-duration" });
    this.name = h("span", { class: "tool-name" }, name || "?");
    this.preview = h("span", { class: "tool-preview" });
    this.args = h("pre", { class: "tool-args" });
    this.result = h("pre", { class: "tool-result" });
    this.resultSection = h(
      "div",
      { class: "tool-section", hidden: true },
      h("div", { class: "tool-section-title", i18n: "tool.result" }),
      this.result,
    );
    this.el = h(
      "details",
      { class: "tool-card", testid: "tool-card", dataset: { toolCallId: id || "" } },
      h(
        "summary",
        {},
        h("span", { class: "tool-dot", "aria-hidden": "true" }),
        this.name,
        this.preview,
        this.status,
        this.duration,
      ),
      h(
        "div",
        { class: "tool-body" },
        h(
          "div",
          { class: "tool-section" },
          h("div", { class: "tool-section-title", i18n: "tool.arguments" }),
          this.args,
        ),
        this.resultSection,
      ),
    );
    this.setArguments(args);
    this.setStatus(status);
  }

  setArguments(args) {
    if (args === undefined) return;
    this.args.textContent = prettyArguments(args);
    this.preview.textContent = preview(args);
  }

  setStatus(status) {
    this.el.dataset.status = status;
    statusLabel(this.status, status);
  }

  /** Fill in how the call ended. */
  finish({ name, result, status, durationMs, images = [] }) {
    if (name) this.name.textContent = name;
    this.result.textContent = result ?? "";
    this.resultSection.hidden = false;
    // A result's images (a browser screenshot) are shown inline, below the collapsed card.
    for (const old of this.images ?? []) old.remove();
    this.images = (images ?? [])
      .filter((image) => SHOWN_TYPES.has(image.media_type) && image.data)
      .map((image) => {
        const src = `data:${image.media_type};base64,${image.data}`;
        return h("img", { class: "tool-image", testid: "tool-image", src, alt: name || "" });
      });
    this.el.after(...this.images);
    this.duration.textContent = durationMs === undefined ? "" : formatDuration(durationMs);
    this.setStatus(status || "ok");
  }
}
