// Channels (Telegram and others): whether each is enabled and what state it is in, and the
// pairing codes strangers asked for, approved here as with `countbot pairing approve`.

import { api } from "../lib/api.js";
import { h } from "../lib/dom.js";
import { formatTime } from "../lib/format.js";
import { t } from "../lib/i18n.js";
import { toast } from "../lib/toast.js";
import { channelForm } from "./channelSetup.js";
import { dataTable, loadPanel } from "./panel.js";

export function renderChannels(root) {
  const channels = h("div", { class: "channels" });
  const pairing = h("div", { class: "pairing" });
  const refreshPairing = () =>
    loadPanel(pairing, null, () => api("/api/channels/pairing"), (data) =>
      pairingView(data, refreshPairing),
    );
  const setup = h("div", { class: "channel-setup" });
  const showTable = (data) => {
    // A channel on its way up (or retrying) is looked at again until it settles.
    const moving = (data.channels || []).some((c) => ["starting", "restarting"].includes(c.state));
    if (moving) setTimeout(() => root.contains(channels) && api("/api/channels").then(showTable), 1000);
    return channels.replaceChildren(
      channelTable(data, (channel) => setup.replaceChildren(channelForm(channel, refreshChannels))),
    );
  };
  const refreshChannels = () => api("/api/channels").then(showTable);
  root.replaceChildren(
    h("h2", { class: "visually-hidden", i18n: "channels.title" }),
    channels,
    setup,
    pairing,
  );
  const first = refreshChannels().catch((error) =>
    channels.replaceChildren(
      h("p", { class: "load-error", i18n: "common.loadFailed", i18nArgs: { error: error.message } }),
    ),
  );
  return Promise.all([first, refreshPairing()]);
}

/** `onSetUp(channel)` opens the channel's setup form. */
function channelTable(data, onSetUp) {
  const channels = data.channels || [];
  if (!channels.length) return h("p", { class: "muted", testid: "channels-empty", i18n: "channels.none" });
  return dataTable(
    ["channels.name", "channels.enabled", "channels.state", "channels.connection", "channels.detail", ""],
    channels.map((channel) =>
      h(
        "tr",
        { testid: "channel-item", dataset: { state: channel.state || "" } },
        // A second bot account (`telegram.work`) is shown by its channel name.
        h("td", { i18n: `channels.kind.${channel.name}`, i18nFallback: channel.name }),
        h("td", { i18n: channel.enabled ? "common.yes" : "common.no" }),
        h("td", {}, h("span", { class: `state state-${channel.state}`, i18n: stateKey(channel) })),
        h("td", { testid: "channel-connection" }, connection(channel)),
        h("td", detailLabel(channel), channel.problem ? null : channel.detail || ""),
        h(
          "td",
          {},
          // A bot account is set up in config.yaml (its platform's `accounts`), not here.
          channel.name.includes(".")
            ? null
            : h("button", {
                type: "button",
                class: "small",
                testid: "channel-setup",
                i18n: "channelSetup.open",
                onclick: () => onSetUp(channel),
              }),
        ),
      ),
    ),
  );
}

/** "@my_bot · ok": which account the channel runs as and how its link to the platform is. */
function connection(channel) {
  return [channel.bot, channel.connection].filter(Boolean).join(" · ");
}

/** "Mallory · @mallory · 555": every way the owner might recognise a sender. */
function who(sender) {
  return [sender.display_name, sender.username && `@${sender.username}`, sender.sender_id]
    .filter(Boolean)
    .join(" · ");
}

function pairingView(data, refresh) {
  const pending = data.pending || [];
  const paired = data.paired || [];
  return h(
    "div",
    {},
    h("h3", { i18n: "channels.pairing" }),
    h("p", { class: "muted", i18n: "channels.pairingHint" }),
    pending.length
      ? dataTable(
          ["channels.name", "channels.who", "channels.code", "channels.expires", ""],
          pending.map((request) => pendingRow(request, refresh)),
        )
      : h("p", { class: "muted", testid: "pairing-empty", i18n: "channels.noPairing" }),
    h("h3", { i18n: "channels.paired" }),
    paired.length
      ? dataTable(
          ["channels.name", "channels.who", "channels.pairedSince"],
          paired.map((entry) =>
            h(
              "tr",
              { testid: "paired-item", dataset: { channel: entry.channel } },
              h("td", {}, entry.channel),
              h("td", {}, who(entry.sender)),
              h("td", {}, formatTime(entry.approved_at)),
            ),
          ),
        )
      : h("p", { class: "muted", testid: "paired-empty", i18n: "channels.nonePaired" }),
  );
}

function pendingRow(request, refresh) {
  const approve = h("button", {
    type: "button",
    class: "small primary",
    testid: "pairing-approve",
    i18n: "channels.approve",
  });
  approve.addEventListener("click", async () => {
    approve.disabled = true;
    try {
      const paired = await api("/api/channels/pairing/approve", {
        method: "POST",
        body: { channel: request.channel, code: request.code },
      });
      toast(t("channels.approved", { who: who(paired.sender), channel: paired.channel }), "info");
    } catch (error) {
      toast(error.message);
    }
    refresh();
  });
  return h(
    "tr",
    { testid: "pairing-item", dataset: { channel: request.channel, code: request.code } },
    h("td", {}, request.channel),
    h("td", {}, who(request.sender)),
    h("td", {}, h("code", {}, request.code)),
    h("td", {}, formatTime(request.expires_at)),
    h("td", {}, approve),
  );
}

/** Why a channel is not running: a known reason in the page's language, else the daemon's words. */
function detailLabel(channel) {
  if (!channel.problem) return {};
  return { i18n: `channels.problem.${channel.problem}`, i18nFallback: channel.detail || "" };
}

/** The translation key of a channel's state (its wording differs per language). */
function stateKey(channel) {
  return channel.state ? `channels.state.${channel.state}` : undefined;
}
