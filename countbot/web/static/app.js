// Start-up and wiring: language, connection indicator, sidebar, chat, composer and the
// hash routes (#/chat, #/settings, ...) that switch between the chat and the panel pages.

import { showCapabilities } from "./chat/capabilities.js";
import { Chat } from "./chat/chat.js";
import { Composer } from "./chat/composer.js";
import { MemorySwitch } from "./chat/memorySwitch.js";
import { ModelPicker } from "./chat/modelPicker.js";
import { AgentSwitcher } from "./chat/agentSwitcher.js";
import { SessionList } from "./chat/sessions.js";
import { SubagentStrip } from "./chat/subagents.js";
import { Transcript } from "./chat/transcript.js";
import { api } from "./lib/api.js";
import { label, translateTree } from "./lib/dom.js";
import { getLang, onLangChange, setLang, t } from "./lib/i18n.js";
import { guardLeave, mayLeave } from "./lib/leave.js";
import { Socket } from "./lib/socket.js";
import { renderAudit } from "./panels/audit.js";
import { renderChannels } from "./panels/channels.js";
import { renderCron } from "./panels/cron.js";
import { renderMemory } from "./panels/memory.js";
import { renderSettings } from "./panels/settings.js";
import { renderSkills } from "./panels/skills.js";
import { renderSubagents } from "./panels/subagents.js";
import { renderTriggers } from "./panels/triggers.js";
import { renderUsage } from "./panels/usage.js";

const PANELS = {
  cron: renderCron,
  settings: renderSettings,
  memory: renderMemory,
  skills: renderSkills,
  audit: renderAudit,
  usage: renderUsage,
  channels: renderChannels,
  subagents: renderSubagents,
  triggers: renderTriggers,
};
const PHONE = matchMedia("(max-width: 767px)");
// The built-in-model banner, once dismissed, stays away on this browser.
const OFFLINE_DISMISSED_KEY = "countbot.offlineDismissed";

const $ = (selector) => document.querySelector(selector);
const byTestId = (id) => document.querySelector(`[data-testid="${id}"]`);

function setupLanguage() {
  document.documentElement.lang = getLang();
  translateTree(document);
  const select = byTestId("lang-switch");
  select.value = getLang();
  select.addEventListener("change", () => setLang(select.value));
  onLangChange((lang) => {
    select.value = lang;
    translateTree(document);
  });
}

function setupSidebar() {
  const sidebar = $("#sidebar");
  const scrim = $("#scrim");
  const button = $("#menu-button");
  const toggle = (open) => {
    sidebar.classList.toggle("open", open);
    scrim.hidden = !open;
    button.setAttribute("aria-expanded", String(open));
  };
  button.addEventListener("click", () => toggle(!sidebar.classList.contains("open")));
  scrim.addEventListener("click", () => toggle(false));
  addEventListener("keydown", (event) => {
    if (event.key === "Escape") toggle(false);
  });
  // On a phone the sidebar covers the page: close it once something in it was chosen.
  sidebar.addEventListener("click", (event) => {
    if (PHONE.matches && event.target.closest("a, .session-open, .new-session")) toggle(false);
  });
}

function showConnection(state) {
  const indicator = byTestId("conn-state");
  indicator.dataset.state = state;
  label($("#conn-label"), `conn.${state}`);
}

/** The "no model" banner follows the daemon: its health on (re)connect, then `status` pushes. */
function showModelState(configured) {
  $("#banner").hidden = configured !== false;
}

/**
 * What the daemon found in its config file since it started: an edit it could not use (the
 * running settings were kept) or changed sections that wait for a restart.
 */
function showConfigState(config) {
  const notice = $("#config-notice");
  const text = $("#config-notice-text");
  if (config?.error) label(text, "banner.configError", { error: config.error });
  else if (config?.restart?.length) {
    label(text, "banner.configRestart", { sections: config.restart.join(", ") });
  }
  notice.hidden = !config?.error && !config?.restart?.length;
  notice.dataset.kind = config?.error ? "error" : "restart";
}

/** The built-in-model banner: shown while turns use it, unless dismissed on this browser. */
function showOfflineDefault(offline) {
  const dismissed = localStorage.getItem(OFFLINE_DISMISSED_KEY) === "1";
  $("#offline-notice").hidden = offline !== true || dismissed;
}

async function checkHealth() {
  try {
    const health = await api("/api/health");
    showModelState(health.model_configured);
    showOfflineDefault(health.offline_default);
    $("#version").textContent = health.version ? `CountBot ${health.version}` : "";
  } catch {
    // The connection indicator already tells the user the daemon is unreachable.
  }
}

function setupRouter(sessions, chat) {
  const title = $("#view-title");
  const chatView = $("#view-chat");
  const panelView = $("#view-panel");
  let current = "chat";
  let shown = null; // the hash on screen, to go back to when leaving is cancelled
  const showTitle = () => {
    if (current !== "chat") {
      label(title, `nav.${current}`);
      return;
    }
    const name = chat.sessionId && sessions.titleOf(chat.sessionId);
    if (name) {
      delete title.dataset.i18n;
      title.textContent = name;
    } else label(title, chat.sessionId ? "sessions.untitled" : "sessions.new");
  };
  const route = () => {
    if (shown !== null && location.hash !== shown && !mayLeave(t("common.leaveUnsaved"))) {
      history.replaceState(null, "", shown || location.pathname);
      return;
    }
    guardLeave(null);
    shown = location.hash;
    const name = location.hash.replace(/^#\/?/, "");
    const panel = PANELS[name];
    current = panel ? name : "chat";
    for (const link of document.querySelectorAll(".nav a")) {
      if (link.dataset.route === current) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
    chatView.hidden = Boolean(panel);
    panelView.hidden = !panel;
    showTitle();
    checkHealth();
    if (panel) panel(panelView, { openSession });
    else if (!PHONE.matches) byTestId("composer-input").focus();
  };
  const openSession = (sessionId) => {
    if (location.hash && location.hash !== "#/chat") {
      if (!mayLeave(t("common.leaveUnsaved"))) return;
      guardLeave(null);
      location.hash = "#/chat";
    }
    chat.open(sessionId);
  };
  addEventListener("hashchange", route);
  return { route, openSession, showTitle };
}

function start() {
  setupLanguage();
  setupSidebar();
  $("#offline-dismiss").addEventListener("click", () => {
    localStorage.setItem(OFFLINE_DISMISSED_KEY, "1");
    $("#offline-notice").hidden = true;
  });
  let router = null;
  const transcript = new Transcript($("#transcript"), {
    onLoadEarlier: () => chat.loadEarlier(),
    agent: () => agents.current,
  });
  const socket = new Socket({
    onFrame: (frame) => {
      if (frame.type === "status") {
        showModelState(frame.model_configured);
        showOfflineDefault(frame.offline_default);
        showConfigState(frame.config);
        showCapabilities(byTestId("capabilities"));
      }
      else if (frame.type === "sessions_changed") sessionsChanged(frame);
      else chat.handle(frame);
    },
    onState: (state) => {
      showConnection(state);
      // Back online: the model may have been configured and sessions changed meanwhile.
      if (state === "open") {
        checkHealth();
        showCapabilities(byTestId("capabilities"));
        sessions.refreshSoon();
      }
    },
    onResync: (sessionId) => chat.resync(sessionId),
  });
  const agents = new AgentSwitcher(byTestId("agent-switcher"), {
    // Another assistant's chats; the open one is not its, so a new chat starts.
    onChange: () => {
      sessions.refresh();
      router.openSession(null);
    },
  });
  const sessions = new SessionList({
    agent: () => agents.current,
    list: $("#session-list"),
    search: byTestId("session-search"),
    more: $("#more-sessions"),
    onOpen: (sessionId) => router.openSession(sessionId),
    onRendered: () => router?.showTitle(),
  });
  const composer = new Composer({
    form: $("#composer"),
    input: byTestId("composer-input"),
    stop: byTestId("stop-button"),
    mode: byTestId("queue-mode"),
    imageInput: byTestId("image-input"),
    voiceButton: byTestId("voice-button"),
    attachments: $("#attachments"),
    onSend: (content, media, mode, attachments) => chat.send(content, media, mode, 0, attachments),
    onStop: () => chat.cancel(),
    agent: () => agents.current,
  });
  const subagents = new SubagentStrip($("#subagents"), {
    onOpen: (sessionId) => router.openSession(sessionId),
  });
  const chat = new Chat({
    socket,
    transcript,
    subagents,
    models: new ModelPicker(byTestId("chat-model")),
    memory: new MemorySwitch(byTestId("chat-memory")),
    onRunning: (running) => composer.setRunning(running),
    onSessionChange: (sessionId) => {
      sessions.setActive(sessionId);
      router?.showTitle();
    },
    onActivity: () => sessions.refreshSoon(),
    agent: () => agents.current,
  });
  // Pushed by the daemon when any surface (Telegram, the CLI, a job, another tab) changed one.
  const sessionsChanged = (frame) => {
    sessions.refreshSoon();
    if (frame.change === "deleted" && frame.session_id === chat.sessionId) chat.open(null);
  };
  router = setupRouter(sessions, chat);
  byTestId("new-session").addEventListener("click", () => router.openSession(null));
  sessions.refresh();
  agents.load();
  onLangChange(() => {
    sessions.render();
    agents.render();
  });
  chat.open(Chat.lastSession());
  socket.start();
  router.route();
}

start();
