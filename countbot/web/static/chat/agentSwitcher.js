// The agent switcher (`agents:` in config.yaml): which assistant the sidebar lists the chats of
// and a new chat talks to. Hidden while the daemon has only `main`. The pick is kept across
// reloads; an assistant that cannot answer now is listed, disabled, with why.

import { api } from "../lib/api.js";
import { t } from "../lib/i18n.js";

const AGENT_KEY = "countbot.agent";

export class AgentSwitcher {
  /** onChange(name): another assistant was picked. */
  constructor(select, { onChange }) {
    this.select = select;
    this.onChange = onChange;
    this.current = localStorage.getItem(AGENT_KEY) || "main";
    this.agents = [];
    select.addEventListener("change", () => this.pick(select.value));
  }

  async load() {
    let answer;
    try {
      answer = await api("/api/agents");
    } catch {
      answer = { agents: [] };
    }
    this.agents = answer.agents || [];
    if (!this.agents.some((agent) => agent.name === this.current)) this.current = "main";
    this.render();
  }

  render() {
    this.select.replaceChildren(
      ...this.agents.map(({ name, unavailable }) => {
        const option = new Option(unavailable ? t("agents.off", { name }) : name, name);
        option.disabled = Boolean(unavailable) && name !== this.current;
        if (unavailable) option.title = unavailable;
        return option;
      }),
    );
    this.select.value = this.current;
    this.select.hidden = this.agents.length < 2;
  }

  pick(name) {
    if (name === this.current) return;
    this.current = name;
    localStorage.setItem(AGENT_KEY, name);
    this.onChange(name);
  }
}
