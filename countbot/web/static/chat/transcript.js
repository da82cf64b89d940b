// The conversation on screen: user and assistant messages, tool cards and notices, the one
// assistant message that is still streaming, and scrolling that follows new output (and late
// image loads) only while the reader is at the bottom.

import { h, label } from "../lib/dom.js";
import { formatCost, formatNumber } from "../lib/format.js";
import { renderMarkdown } from "../lib/markdown.js";
import { ToolCard } from "./toolCard.js";
import { actionRow } from "./messageActions.js";
import { Working } from "./working.js";

const STICKY_PX = 80; // this close to the bottom counts as reading the newest output
const IMAGE_TYPES = /^image\/(png|jpeg|gif|webp)$/;
const BASE64 = /^[A-Za-z0-9+/=\s]+$/;

/** A file sent with a message: a voice note plays (with its words, from assistant `agent`'s
 * workspace), a document is a chip. */
function attachmentNode({ file, name, kind, text = "" }, agent) {
  if (kind === "voice") {
    const where = new URLSearchParams({ agent });
    const src = `/api/media/${encodeURIComponent(file.split("/").pop())}?${where}`;
    return h(
      "div",
      { class: "attachment voice", testid: "voice-attachment" },
      h("audio", { controls: true, preload: "none", src }),
      text ? h("div", { class: "voice-transcript" }, text) : null,
    );
  }
  return h("span", { class: "attachment document", testid: "document-attachment" }, `📄 ${name}`);
}

/** An <img> for a stored or attached image; only inline image data and http(s) URLs load. */
function imageNode(image) {
  let src = "";
  if (image.data && IMAGE_TYPES.test(image.media_type) && BASE64.test(image.data)) {
    src = `data:${image.media_type};base64,${image.data}`;
  } else if (image.url && /^https?:\/\//i.test(image.url)) {
    src = image.url;
  }
  return src ? h("img", { src, alt: "", loading: "lazy", class: "message-image" }) : null;
}

// Notices named by their code (docs/protocol.md); `key` may depend on the notice's details.
// A progress notice (a retry, a summary running) leaves the screen when its turn ends.
const CODED_NOTICES = {
  cancelled: { kind: "cancelled", key: "chat.cancelled" },
  no_model: { kind: "error", key: "chat.noModel", settings: true },
  no_vision: { kind: "note", key: "chat.noVision", settings: true },
  summarizing: { kind: "progress", key: "chat.summarizing" },
  retrying: { kind: "progress", key: "chat.retrying" },
  fallback: { kind: "note", key: "chat.fallback" },
  truncated: {
    kind: "note",
    key: (details) =>
      details.runaway
        ? "chat.truncatedRunaway"
        : details.continuing
          ? "chat.truncatedContinuing"
          : "chat.truncated",
  },
  // An answer without text: why, and a Retry button (sends the question again, as regenerate).
  empty_answer: {
    kind: "note",
    key: (details) => (details.reason === "filter" ? "chat.emptyFiltered" : "chat.emptyAnswer"),
    retry: true,
  },
  step_limit: { kind: "note", key: "chat.stepLimit" },
  tool_loop: { kind: "note", key: "chat.toolLoop" },
};

export class Transcript {
  /** agent(): the assistant whose chat is shown (its workspace holds the voice notes). */
  constructor(scroller, { onLoadEarlier, agent = () => "main" }) {
    this.scroller = scroller;
    this.agent = agent;
    this.earlier = h("button", {
      type: "button",
      class: "load-earlier",
      testid: "load-earlier",
      hidden: true,
      i18n: "chat.loadEarlier",
      onclick: onLoadEarlier,
    });
    this.empty = h(
      "div",
      { class: "empty-state" },
      h("h2", { i18n: "chat.emptyTitle" }),
      h("p", { i18n: "chat.emptyHint" }),
      h("ul", { class: "capabilities", testid: "capabilities", hidden: true }),
    );
    this.list = h("div", { class: "messages" });
    this.working = new Working();
    scroller.replaceChildren(this.earlier, this.empty, this.list, this.working.el);
    this.target = this.list;
    this.cards = new Map();
    this.bubbles = new WeakMap(); // assistant message element -> its bubble (its markdown text)
    this.live = null;
    this.pinned = true;
    scroller.addEventListener("scroll", () => {
      this.pinned = this.nearBottom();
    });
    new ResizeObserver(() => {
      if (this.pinned) this.scrollToEnd();
    }).observe(this.list);
  }

  clear() {
    this.list.replaceChildren();
    this.cards.clear();
    this.live = null;
    this.pinned = true;
    this.setHasMore(false);
    this.empty.hidden = false;
  }

  setHasMore(more) {
    this.earlier.hidden = !more;
  }

  /** Render older entries above what is shown, keeping the reader's place. */
  prepend(render) {
    const fragment = document.createDocumentFragment();
    this.target = fragment;
    try {
      render();
    } finally {
      this.target = this.list;
    }
    const before = this.scroller.scrollHeight;
    this.list.prepend(fragment);
    this.scroller.scrollTop += this.scroller.scrollHeight - before;
  }

  add(el) {
    if (this.target !== this.list) {
      this.target.append(el);
      return;
    }
    this.list.append(el);
    this.empty.hidden = true;
  }

  nearBottom() {
    const { scrollHeight, scrollTop, clientHeight } = this.scroller;
    return scrollHeight - scrollTop - clientHeight < STICKY_PX;
  }

  scrollToEnd() {
    this.scroller.scrollTop = this.scroller.scrollHeight;
    this.pinned = true;
  }

  // --- entries ------------------------------------------------------------------------------

  userMessage({ content = "", images = [], attachments = [] }) {
    const pictures = images.map(imageNode).filter(Boolean);
    const el = h(
      "div",
      { class: "message user", testid: "message", dataset: { role: "user" } },
      pictures.length ? h("div", { class: "message-images" }, pictures) : null,
      h("div", { class: "message-files" }),
      content ? h("div", { class: "message-text" }, content) : null,
      h("div", { class: "message-meta" }),
      actionRow("user"),
    );
    this.showAttachments(el, attachments);
    this.add(el);
    return el;
  }

  /** Show the files a user message carries (again once the daemon has heard a voice note). */
  showAttachments(el, attachments) {
    const box = el.querySelector(".message-files");
    box.hidden = !attachments.length;
    box.replaceChildren(...attachments.map((attachment) => attachmentNode(attachment, this.agent())));
    el.attachments = attachments.map(({ file, name, kind }) => ({ file, name, kind }));
  }

  /** A subagent's report: Markdown, marked as the subagent's, without the user's actions. */
  reportMessage(text, who) {
    const el = h(
      "div",
      { class: "message assistant report", testid: "report", dataset: { role: "report" } },
      h("div", { class: "message-meta", i18n: "chat.subagentReport", i18nArgs: { id: who } }),
      h("div", { class: "markdown" }, renderMarkdown(text)),
    );
    this.add(el);
    return el;
  }

  /** Mark a sent message "queued", "failed" or nothing (accepted and running). */
  markUser(el, state) {
    const meta = el.querySelector(".message-meta");
    if (state) {
      el.dataset.state = state;
      label(meta, `chat.state.${state}`);
    } else {
      delete el.dataset.state;
      meta.replaceChildren();
      delete meta.dataset.i18n;
    }
  }

  assistantMessage(text, { reasoning = "", model = "", usage = null } = {}) {
    const body = h("div", { class: "markdown" }, renderMarkdown(text));
    const reasoningText = h("div", { class: "reasoning-text" }, reasoning);
    const reasoningBox = h(
      "details",
      { class: "reasoning", hidden: !reasoning },
      h("summary", { i18n: "chat.reasoning" }),
      reasoningText,
    );
    const meta = h("div", { class: "message-meta" });
    const el = h(
      "div",
      { class: "message assistant", testid: "message", dataset: { role: "assistant" } },
      reasoningBox,
      body,
      meta,
      actionRow("assistant"),
    );
    this.add(el);
    const bubble = { el, body, reasoningBox, reasoningText, meta, text, reasoning };
    this.bubbles.set(el, bubble);
    this.setMeta(bubble, model, usage);
    return bubble;
  }

  setMeta(bubble, model, usage) {
    const tokens = (usage?.prompt_tokens || 0) + (usage?.completion_tokens || 0);
    const parts = [];
    if (model) parts.push(h("span", { class: "meta-model" }, model));
    if (tokens) {
      // A model without a known price reports cost 0: show tokens only rather than "$0.00".
      const args = { tokens: formatNumber(tokens), cost: formatCost(usage.cost_usd) };
      const key = usage.cost_usd ? "chat.usage" : "chat.tokens";
      parts.push(h("span", { i18n: key, i18nArgs: args }));
    }
    bubble.meta.replaceChildren(...parts);
  }

  toolCall({ id, name, args, status }) {
    let card = this.cards.get(id);
    if (card) {
      // Known from a newer page or a replay: keep the outcome it already shows.
      card.setArguments(args);
      if (status === "running") card.setStatus(status);
    } else {
      card = new ToolCard({ id, name, args, status });
      this.cards.set(id, card);
      this.add(card.el);
    }
    return card;
  }

  toolResult({ id, name, result, status, durationMs, images }) {
    const card = this.cards.get(id) ?? this.toolCall({ id, name, args: undefined, status });
    card.finish({ name, result, status, durationMs, images });
  }

  notice(kind, { text, key, args }) {
    const el = h("div", { class: `notice notice-${kind}`, testid: "notice", dataset: { kind } });
    if (key) label(el, key, args);
    else el.textContent = text;
    this.add(el);
  }

  /**
   * A notice the daemon names by `code`, worded in the reader's language, the same live and
   * after a reload; guidance that needs the Settings page links to it. Unknown codes show `text`.
   */
  codedNotice(code, text = "", details = {}) {
    const known = CODED_NOTICES[code];
    if (!known) {
      this.notice("note", { text });
      return;
    }
    const el = h("div", {
      class: `notice notice-${known.kind}`,
      testid: "notice",
      dataset: { kind: known.kind, code },
    });
    const key = typeof known.key === "function" ? known.key(details) : known.key;
    el.append(label(h("span"), key, details));
    if (known.settings) {
      const link = { href: "#/settings", testid: "notice-settings", i18n: "banner.openSettings" };
      el.append(" ", h("a", link));
    }
    if (known.retry) {
      const retry = { type: "button", class: "secondary", testid: "notice-retry", i18n: "common.retry" };
      el.append(" ", h("button", { ...retry, dataset: { action: "retry" } }));
    }
    this.add(el);
  }

  summary(text) {
    this.add(
      h(
        "details",
        { class: "notice notice-summary", testid: "notice", dataset: { kind: "summary" } },
        h("summary", { i18n: "chat.summary" }),
        h("div", { class: "summary-text" }, text),
      ),
    );
  }

  /** A message's text as written: an answer's markdown, a user message's words. */
  textOf(el) {
    const bubble = this.bubbles.get(el);
    return bubble ? bubble.text : (el.querySelector(".message-text")?.textContent ?? "");
  }

  /** Remove `el` and everything shown after it (a regenerate or an edit replaces them). */
  cutFrom(el) {
    while (el.nextElementSibling) el.nextElementSibling.remove();
    el.remove();
    this.live = null;
  }

  // --- the live turn ------------------------------------------------------------------------

  stream(chunk) {
    const live = this.ensureLive();
    live.text += chunk;
    this.streamed = true;
    if (live.scheduled) return;
    live.scheduled = true;
    // Re-rendering once per frame keeps long answers cheap however small the chunks are.
    requestAnimationFrame(() => {
      live.scheduled = false;
      this.renderLive(live);
    });
  }

  reasoning(chunk) {
    const live = this.ensureLive();
    live.reasoning += chunk;
    live.reasoningText.textContent = live.reasoning;
    live.reasoningBox.hidden = false;
  }

  ensureLive() {
    if (!this.live) {
      this.live = this.assistantMessage("");
      this.live.el.dataset.streaming = "true";
    }
    return this.live;
  }

  renderLive(live) {
    live.body.replaceChildren(renderMarkdown(live.text));
  }

  /** Close the streaming message (a tool call or the end of the turn follows). */
  /** Progress notices (a retry, a summary) are done once the turn moves on or ends. */
  endProgress() {
    for (const el of this.list.querySelectorAll(".notice-progress")) el.remove();
  }

  endLive() {
    this.endProgress();
    const live = this.live;
    if (!live) return;
    this.live = null;
    delete live.el.dataset.streaming;
    if (!live.text && !live.reasoning) live.el.remove();
    else this.renderLive(live);
  }

  toolStart({ id, name, args }) {
    this.endLive();
    this.toolCall({ id, name, args, status: "running" });
  }

  /**
   * The turn is done: `content` is the complete final answer and replaces what streamed. After a
   * tool call nothing is live: what the model wrote is already on screen (a turn stopped at its
   * step limit), so only a turn that streamed nothing gets a new bubble. `model` answered.
   */
  finish(content, usage, model = "") {
    const bubble = this.live ?? (content && !this.streamed ? this.assistantMessage("") : null);
    this.live = null;
    this.streamed = false;
    this.endProgress();
    if (!bubble) return;
    if (content) bubble.text = content;
    delete bubble.el.dataset.streaming;
    this.renderLive(bubble);
    this.setMeta(bubble, model, usage);
  }
}
