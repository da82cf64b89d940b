// The sign of life under a running turn: what it is doing now (waiting for the model, thinking,
// writing, running a tool, summarizing, retrying) and for how long, from the moment it starts
// until its done, error or cancelled. A slow model (20 s before the first word) is then
// visibly working rather than silent.

import { h, label } from "../lib/dom.js";

export class Working {
  constructor() {
    this.text = h("span", { class: "working-text" });
    this.elapsed = h("span", { class: "working-elapsed", testid: "working-elapsed" });
    this.el = h(
      "div",
      { class: "working", testid: "working", hidden: true, role: "status" },
      h("span", { class: "working-dot", "aria-hidden": "true" }),
      this.text,
      this.elapsed,
    );
    this.started = 0;
    this.timer = null;
  }

  /** Show `phase` (waiting, thinking, writing, tool, summarizing, retrying) with its details. */
  show(phase, details = {}) {
    if (this.el.hidden) {
      this.el.hidden = false;
      this.started = Date.now();
      this.timer = setInterval(() => this.tick(), 1000);
      this.tick();
    }
    if (this.el.dataset.phase === phase && phase !== "tool" && phase !== "retrying") return;
    this.el.dataset.phase = phase;
    label(this.text, `chat.working.${phase}`, details);
  }

  hide() {
    this.el.hidden = true;
    delete this.el.dataset.phase;
    clearInterval(this.timer);
    this.timer = null;
  }

  tick() {
    const seconds = Math.floor((Date.now() - this.started) / 1000);
    this.elapsed.textContent = seconds ? ` · ${seconds} s` : "";
  }
}
