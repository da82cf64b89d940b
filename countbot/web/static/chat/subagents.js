// The subagents a chat started that are still queued or running, shown under the transcript
// with a stop button each. Loaded over REST when a session opens, then kept current by the
// session's `subagent` frames; an ended subagent leaves the list (its report follows in the chat).

import { api } from "../lib/api.js";
import { h, label } from "../lib/dom.js";
import { toast } from "../lib/toast.js";

const ACTIVE = new Set(["queued", "running"]);

export class SubagentStrip {
  /** onOpen(sessionId): show a subagent's own session. */
  constructor(root, { onOpen }) {
    this.root = root;
    this.onOpen = onOpen;
    this.sessionId = null;
    this.items = new Map(); // id -> {id, label, status, session}
  }

  /** Show the running subagents of `sessionId` (null: none). */
  async show(sessionId) {
    this.sessionId = sessionId;
    this.items.clear();
    this.render();
    if (!sessionId) return;
    try {
      const data = await api(`/api/subagents?active=1&session=${encodeURIComponent(sessionId)}`);
      if (sessionId !== this.sessionId) return;
      for (const item of data.subagents || []) {
        this.items.set(item.id, {
          id: item.id,
          label: item.label,
          status: item.status,
          session: item.session_id,
        });
      }
      this.render();
    } catch (error) {
      toast(error.message);
    }
  }

  /** A `subagent` frame of the shown session. */
  update(frame) {
    if (ACTIVE.has(frame.status)) {
      this.items.set(frame.id, {
        id: frame.id,
        label: frame.label,
        status: frame.status,
        session: frame.subagent_session,
      });
    } else this.items.delete(frame.id);
    this.render();
  }

  async stop(id, button) {
    button.disabled = true;
    try {
      await api(`/api/subagents/${encodeURIComponent(id)}/cancel`, { method: "POST" });
    } catch (error) {
      button.disabled = false;
      toast(error.message);
    }
  }

  render() {
    this.root.replaceChildren();
    this.root.hidden = this.items.size === 0;
    for (const item of this.items.values()) {
      const stop = h("button", {
        type: "button",
        class: "subagent-stop",
        testid: "subagent-stop",
        i18n: "subagents.stop",
      });
      stop.addEventListener("click", () => this.stop(item.id, stop));
      const state = label(h("span", { class: "subagent-state" }), `subagents.${item.status}`);
      this.root.append(
        h(
          "div",
          { class: "subagent", testid: "subagent", dataset: { id: item.id, status: item.status } },
          h("span", { class: "subagent-dot", "aria-hidden": "true" }),
          h(
            "button",
            { type: "button", class: "subagent-label", onclick: () => this.onOpen(item.session) },
            item.label,
          ),
          state,
          stop,
        ),
      );
    }
  }
}
