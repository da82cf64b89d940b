// Channels (Telegram and others): whether each is enabled and what state it is in.

import { api } from "../lib/api.js";
import { h } from "../lib/dom.js";
import { loadPanel } from "./panel.js";

export function renderChannels(root) {
  return loadPanel(root, "channels.title", () => api("/api/channels"), channelTable);
}

function channelTable(data) {
  const channels = data.channels || [];
  if (!channels.length) return h("p", { class: "muted", testid: "channels-empty", i18n: "channels.none" });
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      { class: "data-table" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ["channels.name", "channels.enabled", "channels.state", "channels.detail"].map((key) =>
            h("th", { i18n: key }),
          ),
        ),
      ),
      h(
        "tbody",
        {},
        channels.map((channel) =>
          h(
            "tr",
            { testid: "channel-item", dataset: { state: channel.state || "" } },
            h("td", {}, channel.name),
            h("td", { i18n: channel.enabled ? "common.yes" : "common.no" }),
            h("td", {}, h("span", { class: `state state-${channel.state}` }, channel.state || "")),
            h("td", {}, channel.detail || ""),
          ),
        ),
      ),
    ),
  );
}
