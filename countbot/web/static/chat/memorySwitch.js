// The chat's "Remember this chat" switch: off keeps the conversation out of memory (it is not
// indexed, nothing is recalled into it, and what it held is forgotten). The daemon keeps the
// switch with the session; a new chat shows it once it has its session.

import { api } from "../lib/api.js";
import { toast } from "../lib/toast.js";

export class MemorySwitch {
  constructor(label) {
    this.label = label;
    this.box = label.querySelector("input");
    this.sessionId = null;
    this.shown = 0; // bumped per session shown, so a late answer for another one is dropped
    this.box.addEventListener("change", () => this.change());
  }

  /** Show the switch of `sessionId` (null: a new chat, which has none yet). */
  async show(sessionId) {
    const shown = ++this.shown;
    this.sessionId = sessionId;
    this.label.hidden = true;
    if (!sessionId) return;
    let session;
    try {
      session = await api(`/api/sessions/${encodeURIComponent(sessionId)}`);
    } catch {
      return;
    }
    if (shown !== this.shown) return;
    this.box.checked = session.memory !== false;
    this.label.hidden = false;
  }

  async change() {
    const sessionId = this.sessionId;
    const memory = this.box.checked;
    try {
      await api(`/api/sessions/${encodeURIComponent(sessionId)}`, {
        method: "PATCH",
        body: { memory },
      });
    } catch (error) {
      if (sessionId === this.sessionId) this.box.checked = !memory;
      toast(error.message);
    }
  }
}
