// A tool's question to the user (an `approval_request` frame) as a card in the chat: what would
// run, why it needs a yes, a countdown to the automatic deny, and Approve once / Always allow /
// Deny. The card turns into the decision when the server says the question is settled
// (`approval_settled`, sent to every open tab), whoever answered.

import { h, label } from "../lib/dom.js";

const DECISIONS = [
  ["once", "approval.once", "primary"],
  ["always", "approval.always", ""],
  ["deny", "approval.deny", "danger"],
];

export class ApprovalCard {
  /** answer(decision) sends the user's choice; the card waits for the server to settle it. */
  constructor(frame, answer) {
    this.expiresAt = (frame.expires_at || Date.now() / 1000 + (frame.timeout || 0)) * 1000;
    this.countdown = h("span", { class: "approval-countdown", testid: "approval-countdown" });
    this.buttons = DECISIONS.map(([decision, key, style]) =>
      h("button", {
        type: "button",
        class: style,
        i18n: key,
        testid: `approval-${decision}`,
        onclick: () => {
          for (const button of this.buttons) button.disabled = true;
          answer(decision);
        },
      }),
    );
    this.outcome = h("div", { class: "approval-outcome", testid: "approval-outcome", hidden: true });
    this.actions = h("div", { class: "approval-actions" }, this.buttons);
    this.el = h(
      "div",
      {
        class: "approval-card",
        testid: "approval-card",
        role: "group",
        dataset: { approvalId: frame.id, state: "open" },
      },
      h(
        "div",
        { class: "approval-title" },
        h("span", { i18n: "approval.title", i18nArgs: { tool: frame.tool } }),
        this.countdown,
      ),
      h("pre", { class: "approval-summary", testid: "approval-summary" }, frame.summary || ""),
      h("div", { class: "approval-reason", i18n: "approval.reason", i18nArgs: { reason: frame.reason } }),
      this.actions,
      this.outcome,
    );
    this.tick();
    this.timer = setInterval(() => this.tick(), 1000);
  }

  tick() {
    const left = Math.max(0, Math.round((this.expiresAt - Date.now()) / 1000));
    const time = `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`;
    label(this.countdown, "approval.countdown", { time });
  }

  /** Show how the question ended and take the buttons away. */
  settle(frame) {
    clearInterval(this.timer);
    this.el.dataset.state = frame.decision;
    this.actions.remove();
    this.countdown.remove();
    this.outcome.hidden = false;
    const by = frame.by ? { by: frame.by } : undefined;
    const key =
      frame.outcome === "answered" ? `approval.settled.${frame.decision}` : `approval.settled.${frame.outcome}`;
    label(this.outcome, key, by);
  }

  /** The card left the screen (another session, a reload): stop its clock. */
  dispose() {
    clearInterval(this.timer);
  }
}
