"""Typed settings validated from `config.yaml`.

Every section forbids unknown keys so a typo is reported instead of silently ignored. Key names
are part of the public contract (scripts and docs rely on them). The sections are msgspec structs
(`structs.py`); data becomes settings through `structs.validate`, which runs every check below.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, ClassVar, Literal

import msgspec
from msgspec import Meta

from countbot.config.secret import SecretStr
from countbot.config.structs import FieldError, Strict


class LocalModelSettings(Strict):
    """How a `local/` model runs in its child server (small-machine defaults)."""

    context_size: Annotated[int, Meta(ge=256, description="tokens of context the server keeps")] = (
        4096
    )
    threads: Annotated[int, Meta(ge=0, description="CPU threads; 0: half the cores, at most 4")] = 0
    cache_ram_mb: Annotated[
        int, Meta(ge=0, description="RAM for the server's prompt cache, MiB")
    ] = 256
    models_dir: Annotated[Path, Meta(description="None: <data_dir>/models")] | None = None
    idle_stop: Annotated[
        float, Meta(ge=0, description="s a model one chat picked may sit unused before it stops")
    ] = 600.0


class ModelSettings(Strict):
    name: str = ""
    api_base: str | None = None
    api_key: SecretStr | None = None
    temperature: Annotated[float, Meta(ge=0.0, le=2.0)] = 0.7
    max_tokens: Annotated[int, Meta(ge=1)] = 4096
    fallbacks: list[str] = msgspec.field(default_factory=list)
    request_timeout: Annotated[
        float, Meta(gt=0, description="hard deadline for one model call, s")
    ] = 120.0
    max_retries: Annotated[
        int, Meta(ge=0, description="retries of one model call on 429/5xx/timeouts")
    ] = 3
    vision: Annotated[bool, Meta(description="None: look it up in the model map")] | None = None
    context_window: (
        Annotated[
            int,
            Meta(ge=1024, description="tokens; None: the model map's, else a conservative default"),
        ]
        | None
    ) = None
    # direct: CountBot's own OpenAI-compatible client (no litellm); litellm: every provider
    # litellm knows; auto: direct when the model string or api_base says OpenAI-compatible.
    provider_path: Literal["auto", "direct", "litellm"] = "auto"
    # native: the provider's own tool calls; constrained: JSON output matching a schema of "one
    # tool call or an answer" (for models without reliable tool calling); auto: constrained for
    # local/ models, native otherwise.
    tool_calls: Literal["native", "constrained", "auto"] = "auto"
    # Cache breakpoints on requests to models that cache only where told (Claude's).
    prompt_caching: bool = True
    # The model for housekeeping (summaries, the memory flush, titles); empty: `name`.
    utility: str = ""
    # The model the turns switch to once `budget.economy_share` of a daily budget is spent;
    # empty: no switch.
    economy: str = ""
    local: LocalModelSettings = msgspec.field(default_factory=LocalModelSettings)


class AgentSettings(Strict):
    max_iterations: Annotated[int, Meta(ge=1)] = 25
    max_retries: Annotated[int, Meta(ge=0)] = 3
    retry_delay: Annotated[float, Meta(ge=0.0)] = 1.0
    max_history: Annotated[int, Meta(ge=4)] = 60
    tool_timeout: Annotated[float, Meta(gt=0)] = 60.0
    # Share of the model's context window a request may fill (less max_tokens for the answer).
    context_budget: Annotated[float, Meta(gt=0.1, le=1.0)] = 0.8
    # Tokens of tool schemas a request may carry; past it, MCP servers' tools are offered only
    # when the message names their server or is about them (`agent/toolset.py`).
    tool_budget: Annotated[int, Meta(ge=0)] = 5000


class BudgetSettings(Strict):
    """Hard limits on model spending; each is optional (None: no limit). Days are local days."""

    daily_tokens: Annotated[int, Meta(ge=1, description="tokens per day, all sessions")] | None = (
        None
    )
    daily_cost: Annotated[float, Meta(gt=0, description="US dollars per day")] | None = None
    session_tokens: Annotated[int, Meta(ge=1, description="tokens per session per day")] | None = (
        None
    )
    turn_tokens: Annotated[int, Meta(ge=1, description="tokens one turn may use")] | None = None
    # Share of a daily limit after which turns use `model.economy` (when one is set).
    economy_share: Annotated[
        float, Meta(gt=0.0, lt=1.0, description="share of a daily limit; then model.economy")
    ] = 0.8


class PersonaSettings(Strict):
    preset: str = "assistant"
    name: str | None = None
    user_address: str | None = None
    personality: str | None = None
    language: str | None = None


def _check_patterns(field: str, patterns: list[str]) -> None:
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            message = f"{pattern!r} is not a valid regular expression ({exc})"
            raise FieldError(field, message) from None


class ExecSettings(Strict):
    timeout: Annotated[float, Meta(gt=0)] = 60.0
    deny_patterns: list[str] = msgspec.field(default_factory=list)
    # Commands that run without asking in approval mode `on-miss`; never past the built-in guard.
    allow_patterns: list[str] = msgspec.field(default_factory=list)
    max_output: Annotated[int, Meta(ge=1000)] = 30_000
    # auto: bubblewrap when it works here, else every command asks (fail closed); off: explicit.
    sandbox: Literal["auto", "bwrap", "off"] = "auto"
    network: Annotated[bool, Meta(description="commands in the sandbox may use the network")] = True
    # auto: run in the sandbox without asking; on-miss: ask unless allow-listed; always: ask.
    approval: Literal["auto", "on-miss", "always"] = "auto"
    approval_timeout: Annotated[
        float, Meta(gt=0, description="s to wait for an answer; then deny")
    ] = 120.0

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_patterns("deny_patterns", self.deny_patterns)
        _check_patterns("allow_patterns", self.allow_patterns)


class WebToolSettings(Strict):
    allow_private: bool = False
    max_bytes: Annotated[int, Meta(ge=1000)] = 2_000_000
    timeout: Annotated[float, Meta(gt=0)] = 20.0
    search_backend: Literal["none", "brave", "searxng"] = "none"
    search_api_key: SecretStr | None = None
    search_url: str | None = None


class BrowserSettings(Strict):
    """The `browser` tool: a system Chromium the daemon starts on first use (countbot/browser/)."""

    enabled: bool = True
    executable: Annotated[str, Meta(description="'': chromium on PATH")] = ""
    headless: bool = True
    idle_minutes: Annotated[float, Meta(gt=0, description="closed after this long unused")] = 10.0
    action_timeout: Annotated[float, Meta(gt=0, description="s one action may take")] = 20.0
    snapshot_tokens: Annotated[int, Meta(ge=200, description="tokens per snapshot page")] = 2000
    max_download_bytes: Annotated[int, Meta(ge=1024)] = 50_000_000


class ToolsSettings(Strict):
    restrict_to_workspace: bool = True
    exec: ExecSettings = msgspec.field(default_factory=ExecSettings)
    web: WebToolSettings = msgspec.field(default_factory=WebToolSettings)
    browser: BrowserSettings = msgspec.field(default_factory=BrowserSettings)


class WebSettings(Strict):
    """The daemon's web server: `web.host`, `web.port` and `web.token` are fixed names."""

    host: str = "127.0.0.1"
    port: Annotated[int, Meta(ge=0, le=65535)] = 8686
    # Required on any non-loopback host; then every /api call and /ws must present it.
    token: SecretStr | None = None
    # Origins allowed besides the daemon's own (e.g. a reverse proxy's public URL).
    allowed_origins: list[str] = msgspec.field(default_factory=list)
    max_frame_bytes: Annotated[int, Meta(ge=1024, description="largest WebSocket frame, bytes")] = (
        1_048_576
    )
    # Host names (and addresses) the daemon answers to besides its bound address and, on
    # loopback, localhost: the names a browser uses to reach it (DNS rebinding guard).
    allowed_hosts: list[str] = msgspec.field(default_factory=list)
    max_body_bytes: Annotated[int, Meta(ge=1024, description="largest /api request body")] = (
        1_048_576
    )
    max_header_bytes: Annotated[int, Meta(ge=4096, description="largest request head, bytes")] = (
        65_536
    )
    shutdown_grace: Annotated[float, Meta(ge=0, description="s running turns get on SIGTERM")] = (
        10.0
    )


class GatewaySettings(Strict):
    """How turns are scheduled: one at a time per session, with a watchdog."""

    queue_mode: Literal["followup", "steer", "interrupt"] = "followup"
    turn_deadline: Annotated[float, Meta(gt=0, description="s before a turn is stopped")] = 600.0


class SchedulerSettings(Strict):
    """Scheduled jobs: how many run at once, how long one may take, how late one may start."""

    max_concurrent_jobs: Annotated[int, Meta(ge=1)] = 2
    job_timeout: Annotated[float, Meta(gt=0, description="s one job's turn may take")] = 600.0
    # A run missed (daemon down, machine asleep) by up to this long still runs, once.
    misfire_grace_seconds: Annotated[int, Meta(ge=0)] = 300


class SubagentSettings(Strict):
    """Background subagents: how deep they nest, how many run at once, how long one may take."""

    max_depth: Annotated[
        int, Meta(ge=0, description="spawn levels; 0 turns the spawn tool off")
    ] = 1
    max_concurrent: Annotated[
        int, Meta(ge=1, description="subagents running at once; others queue")
    ] = 3
    max_iterations: Annotated[
        int, Meta(ge=1, description="model calls and tool calls per subagent")
    ] = 15
    timeout: Annotated[
        float, Meta(gt=0, description="s one subagent may run before it is stopped")
    ] = 600.0


# "HH:MM-HH:MM", wrapping past midnight when the end is earlier than the start.
_QUIET_HOURS = r"^([01]?\d|2[0-3]):[0-5]\d-([01]?\d|2[0-3]):[0-5]\d$"
# "<channel>:<chat_id>", "web", or empty for nowhere.
_TARGET = r"^(|web|[A-Za-z0-9_.-]+:\S+)$"


class HeartbeatSettings(Strict):
    """The assistant reaching out on its own, driven by the tasks in <workspace>/HEARTBEAT.md."""

    enabled: bool = False
    interval_minutes: Annotated[int, Meta(ge=1)] = 60
    quiet_hours: Annotated[str, Meta(pattern=_QUIET_HOURS)] | None = "23:00-07:00"
    target: Annotated[str, Meta(pattern=_TARGET)] = ""
    daily_cap: Annotated[int, Meta(ge=0, description="beats that may call the model per day")] = 12


class SkillsSettings(Strict):
    """Skills switched off on the Skills page, remembered across restarts."""

    disabled: list[str] = msgspec.field(default_factory=list)


class McpServerSettings(Strict):
    """One MCP server: a command started over stdio, or a streamable-HTTP `url`."""

    command: str | None = None
    args: list[str] = msgspec.field(default_factory=list)
    env: Annotated[dict[str, SecretStr], Meta(description="the server's only env")] = msgspec.field(
        default_factory=dict
    )
    url: str | None = None
    headers: dict[str, SecretStr] = msgspec.field(default_factory=dict)
    enabled: bool = True
    tools: Annotated[list[str], Meta(description="allow-list of the server's tools")] | None = None
    approval: Literal["auto", "always"] = "auto"
    timeout: Annotated[float, Meta(gt=0, description="s one tool call may take")] = 60.0

    def __post_init__(self) -> None:
        super().__post_init__()
        if (self.command is None) == (self.url is None):
            raise ValueError("set exactly one of `command` (stdio) or `url` (streamable HTTP)")


class McpSettings(Strict):
    """MCP servers whose tools the agent may call, by name (`<name>__<tool>`)."""

    servers: dict[str, McpServerSettings] = msgspec.field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in self.servers:
            if not re.fullmatch(r"[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*", name) or len(name) > 30:
                raise FieldError(
                    "servers",
                    f"server name {name!r}: use up to 30 letters, digits, - and single _ "
                    "(tools are named <server>__<tool>)",
                )


class ChannelSettings(Strict):
    """What every chat channel has: on/off, who may talk to it, and a flood limit."""

    enabled: bool = False
    # User ids or usernames; default deny. ["*"] opens the channel to everyone explicitly.
    allow_from: list[str] = msgspec.field(default_factory=list)
    rate_limit_per_minute: Annotated[
        int, Meta(ge=1, description="messages a sender may send a minute")
    ] = 20
    # Where the platform edits messages in place, how often the streaming answer is updated.
    stream_edit_interval: Annotated[float, Meta(ge=0.05, description="s between draft edits")] = 1.0
    # mention: in groups, answer only when mentioned or replied to; ignore: private chats only.
    group_mode: Literal["mention", "ignore"] = "mention"
    # More bots on this platform, each a whole section of its own (nothing inherited): channel
    # `<platform>.<account>`, with its own sessions, pairing and outbox. Each platform's section
    # redeclares it with its own type.
    accounts: dict[str, ChannelSettings] = msgspec.field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__post_init__()
        for name, account in self.accounts.items():
            if not re.fullmatch(_ACCOUNT, name) or name == MAIN_ACCOUNT:
                raise FieldError(
                    "accounts",
                    f"account name {name!r}: use up to 30 letters, digits, _ and -, "
                    f"and not {MAIN_ACCOUNT!r} (the platform's own bot)",
                )
            if account.accounts:
                raise FieldError("accounts", f"account {name!r} cannot have accounts of its own")


# The account name of a platform's own bot (its top-level section), as bindings match it.
MAIN_ACCOUNT = "default"
_ACCOUNT = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,29}$"


def platform_and_account(channel: str) -> tuple[str, str]:
    """The platform and bot account of a channel name: `telegram.work` is ("telegram", "work"),
    `telegram` is ("telegram", `MAIN_ACCOUNT`)."""
    platform, _, account = channel.partition(".")
    return platform, account or MAIN_ACCOUNT


def channel_section_path(channel: str) -> str:
    """Where channel `channel`'s section is in config.yaml (`channels.telegram.accounts.work`)."""
    platform, _, account = channel.partition(".")
    return f"channels.{platform}.accounts.{account}" if account else f"channels.{platform}"


class TelegramSettings(ChannelSettings):
    """`channels.telegram`; `enabled`, `token`, `allow_from`, `proxy`, `base_url` are fixed."""

    accounts: dict[str, TelegramSettings] = msgspec.field(default_factory=dict)
    token: SecretStr | None = None
    proxy: str | None = None
    # The Bot API base URLs exactly as python-telegram-bot takes them (self-hosted servers, tests).
    base_url: str = "https://api.telegram.org/bot"
    base_file_url: str = "https://api.telegram.org/file/bot"
    poll_timeout: Annotated[int, Meta(ge=0, le=50, description="s one long-poll request waits")] = (
        30
    )


class QQSettings(ChannelSettings):
    """`channels.qq`: the OneBot v11 reverse WebSocket a QQ client (NapCat, LLOneBot) connects to.

    The endpoint is CountBot's own listener, separate from the web UI's port: the QQ client is
    no browser, and a token of its own keeps the web UI's token out of the QQ client's config.
    """

    accounts: dict[str, QQSettings] = msgspec.field(default_factory=dict)
    access_token: SecretStr | None = None
    host: str = "127.0.0.1"
    port: Annotated[int, Meta(ge=0, le=65535, description="port the QQ client connects to")] = 6199
    path: str = "/onebot/v11/ws"


class FeishuSettings(ChannelSettings):
    """`channels.feishu`: a Feishu (or Lark) app's bot over the long connection (no public URL)."""

    accounts: dict[str, FeishuSettings] = msgspec.field(default_factory=dict)
    app_id: str | None = None
    app_secret: SecretStr | None = None
    # https://open.feishu.cn for Feishu, https://open.larksuite.com for Lark.
    domain: str = "https://open.feishu.cn"


class DingTalkSettings(ChannelSettings):
    """`channels.dingtalk`: a DingTalk app's robot in Stream mode (no public URL)."""

    accounts: dict[str, DingTalkSettings] = msgspec.field(default_factory=dict)
    client_id: str | None = None
    client_secret: SecretStr | None = None
    # The OpenAPI (Stream connections, robot messages) and the older API (media uploads).
    endpoint: str = "https://api.dingtalk.com"
    oapi_endpoint: str = "https://oapi.dingtalk.com"


class WeComSettings(ChannelSettings):
    """`channels.wecom`: a WeCom (企业微信) AI bot over its long connection (no public URL)."""

    accounts: dict[str, WeComSettings] = msgspec.field(default_factory=dict)
    bot_id: str | None = None
    secret: SecretStr | None = None
    ws_url: str = "wss://openws.work.weixin.qq.com"


class SlackSettings(ChannelSettings):
    """`channels.slack`: a Slack app's bot over Socket Mode (no public URL)."""

    accounts: dict[str, SlackSettings] = msgspec.field(default_factory=dict)
    bot_token: SecretStr | None = None  # xoxb-: the Web API
    app_token: SecretStr | None = None  # xapp- with connections:write: Socket Mode
    # The Web API base; Socket Mode asks it for its WebSocket URL too.
    api_url: str = "https://slack.com/api/"


class DiscordSettings(ChannelSettings):
    """`channels.discord`: a Discord bot over the gateway WebSocket (no public URL)."""

    accounts: dict[str, DiscordSettings] = msgspec.field(default_factory=dict)
    token: SecretStr | None = None
    # The REST API and the gateway exactly as discord.py takes them (tests point them at a fake).
    api_url: str = "https://discord.com/api/v10"
    gateway_url: str = "wss://gateway.discord.gg/"


class EmailSettings(ChannelSettings):
    """`channels.email`: the assistant's own mailbox, IMAP in and SMTP out."""

    accounts: dict[str, EmailSettings] = msgspec.field(default_factory=dict)
    address: str | None = None
    username: str | None = None  # defaults to the address
    password: SecretStr | None = None
    imap_host: str | None = None
    imap_port: Annotated[int, Meta(ge=1, le=65535)] = 993
    imap_security: Literal["ssl", "starttls", "none"] = "ssl"
    smtp_host: str | None = None
    smtp_port: Annotated[int, Meta(ge=1, le=65535)] = 465
    smtp_security: Literal["ssl", "starttls", "none"] = "ssl"
    mailbox: str = "INBOX"
    poll_interval: Annotated[
        float, Meta(ge=1, le=1500, description="s between looks for new mail")
    ] = 60.0
    # Whose Authentication-Results header counts (your provider's host); None: the topmost one.
    authserv_id: str | None = None
    require_authentication: bool = True


class ChannelsSettings(Strict):
    telegram: TelegramSettings = msgspec.field(default_factory=TelegramSettings)
    qq: QQSettings = msgspec.field(default_factory=QQSettings)
    feishu: FeishuSettings = msgspec.field(default_factory=FeishuSettings)
    dingtalk: DingTalkSettings = msgspec.field(default_factory=DingTalkSettings)
    wecom: WeComSettings = msgspec.field(default_factory=WeComSettings)
    slack: SlackSettings = msgspec.field(default_factory=SlackSettings)
    discord: DiscordSettings = msgspec.field(default_factory=DiscordSettings)
    email: EmailSettings = msgspec.field(default_factory=EmailSettings)

    def names(self) -> list[str]:
        """Every channel: each platform, then each of its accounts (`<platform>.<account>`)."""
        found: list[str] = []
        for platform in self.__struct_fields__:
            found.append(platform)
            section: ChannelSettings = getattr(self, platform)
            found.extend(f"{platform}.{account}" for account in section.accounts)
        return found

    def section(self, channel: str) -> ChannelSettings | None:
        """The settings of channel `channel` (a platform or `<platform>.<account>`), or None."""
        platform, _, account = channel.partition(".")
        section = getattr(self, platform, None) if platform in self.__struct_fields__ else None
        if section is None or not account:
            return section
        return section.accounts.get(account)


# A trigger's name: it names its session (`trigger:<name>`) and its webhook URL.
_TRIGGER_NAME = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$"


class TriggerSettings(Strict, kw_only=True):
    """What every trigger shares: what its turn does with the payload, where the answer goes and
    which tools the turn may use (the payload is someone else's words; the turn is unattended)."""

    # The owner's instruction for each event, e.g. "Summarize this issue in two lines".
    prompt: Annotated[str, Meta(min_length=1)]
    # "<channel>:<chat_id>", "web" (kept in the trigger's session), or "" (kept, not sent).
    deliver: Annotated[str, Meta(pattern=_TARGET)] = ""
    # The only tools its turns may use; None: the read-only ones (reading files and memory).
    tools: list[str] | None = None
    enabled: bool = True


class HookSettings(TriggerSettings, kw_only=True):
    """A webhook: `POST /hooks/<name>`, signed with `secret` by the Standard Webhooks scheme
    (webhook-id, webhook-timestamp, webhook-signature) or GitHub's X-Hub-Signature-256."""

    secret: SecretStr
    scheme: Literal["standard", "github"] = "standard"


class FolderSettings(TriggerSettings, kw_only=True):
    """A watched folder: a new or changed file starts a turn once it stopped changing."""

    # Relative paths are inside the workspace.
    path: Path
    settle_seconds: Annotated[
        float, Meta(ge=0.1, le=3600, description="s a file must stay unchanged before its turn")
    ] = 2.0


class MailboxSettings(TriggerSettings, kw_only=True):
    """A watched mailbox (IMAP, IDLE where offered): each new mail starts a turn. The mail stays
    as it is on the server (nothing is marked read)."""

    address: str
    username: str | None = None  # defaults to the address
    password: SecretStr
    imap_host: str
    imap_port: Annotated[int, Meta(ge=1, le=65535)] = 993
    imap_security: Literal["ssl", "starttls", "none"] = "ssl"
    mailbox: str = "INBOX"
    poll_interval: Annotated[
        float, Meta(ge=1, le=1500, description="s between looks for new mail")
    ] = 60.0
    # Whose Authentication-Results header counts (your provider's host); None: the topmost one.
    authserv_id: str | None = None


class TriggersSettings(Strict):
    """Things that happen start turns: webhooks, watched folders, watched mailboxes
    (`countbot/triggers/`). Names are shared by all three (each names a session)."""

    hooks: dict[str, HookSettings] = msgspec.field(default_factory=dict)
    folders: dict[str, FolderSettings] = msgspec.field(default_factory=dict)
    mailboxes: dict[str, MailboxSettings] = msgspec.field(default_factory=dict)
    max_body_bytes: Annotated[
        int, Meta(ge=1024, le=64 * 1024 * 1024, description="largest webhook body, bytes")
    ] = 1024 * 1024
    tolerance_seconds: Annotated[
        float, Meta(ge=1, le=86_400, description="how far a signed timestamp may be off")
    ] = 300.0

    def __post_init__(self) -> None:
        super().__post_init__()
        seen: set[str] = set()
        for section in ("hooks", "folders", "mailboxes"):
            for name in getattr(self, section):
                if not re.fullmatch(_TRIGGER_NAME, name):
                    raise FieldError(
                        section, f"trigger name {name!r}: use up to 40 letters, digits, - and _"
                    )
                if name in seen:
                    raise FieldError(section, f"trigger name {name!r} is used twice")
                seen.add(name)


class MemorySettings(Strict):
    """The memory index over notes and past conversations (`countbot/memory_index/`)."""

    # use-multilingual: offline (the Universal Sentence Encoder, multilingual v3, shipped in the
    # `memory` extra); endpoint: an OpenAI-compatible /embeddings URL; off: full-text only.
    embeddings: Literal["use-multilingual", "endpoint", "off"] = "use-multilingual"
    embeddings_url: (
        Annotated[str, Meta(description="base URL of the /embeddings endpoint")] | None
    ) = None
    embeddings_model: str = "text-embedding-3-small"
    embeddings_api_key: SecretStr | None = None
    embeddings_idle: Annotated[
        float,
        Meta(ge=1.0, le=86_400.0, description="seconds unused before the model's process ends"),
    ] = 300.0
    # Offline only: English is read by all-MiniLM-L6-v2 beside USE (reworded English questions
    # found far more often) where the memory extra brought it; off keeps the vector process
    # small (USE alone) on a machine short of memory. Switching re-embeds in the background.
    embeddings_minilm: Annotated[
        bool, Meta(description="read English with MiniLM beside USE (more memory)")
    ] = True
    recall: Annotated[bool, Meta(description="put the best few memory hits into each turn")] = True
    recall_tokens: Annotated[
        int, Meta(ge=50, le=4000, description="token budget of auto-recall")
    ] = 400
    # Conversations kept out of memory (neither indexed nor recalled into): those of these chat
    # channels ("email", "telegram", "web": all web chats) and of these jobs (their ids). A chat
    # of the web UI has a switch of its own.
    private_channels: list[str] = msgspec.field(default_factory=list)
    private_jobs: list[str] = msgspec.field(default_factory=list)

    # `wordllama` named the offline model before USE replaced it: it means the offline one.
    former_values: ClassVar = {"embeddings": {"wordllama": "use-multilingual"}}


class TranscriptionSettings(Strict):
    """Voice notes to text: the offline recognizer of `countbot[voice]` (English) unless
    `api_base` names an OpenAI-compatible endpoint (`<api_base>/audio/transcriptions`)."""

    enabled: bool = True
    api_base: str | None = None
    api_key: SecretStr | None = None
    model: str = "whisper-1"
    language: (
        Annotated[str, Meta(description="ISO-639-1 hint for the endpoint, e.g. 'zh'")] | None
    ) = None
    max_seconds: Annotated[
        int, Meta(ge=1, le=3600, description="longest voice note transcribed, s")
    ] = 300
    max_bytes: Annotated[int, Meta(ge=1000, description="largest audio file transcribed")] = (
        20_000_000
    )
    timeout: Annotated[
        float,
        Meta(gt=0, description="s one transcription may take (offline: plus 4 s per audio s)"),
    ] = 120.0


class SpeechSettings(Strict):
    """Spoken replies: on channels that take voice notes (Telegram), each answer also arrives as
    one, from an OpenAI-compatible `<api_base>/audio/speech` endpoint, else espeak-ng."""

    enabled: bool = False
    api_base: str | None = None
    api_key: SecretStr | None = None
    model: str = "tts-1"
    voice: Annotated[str, Meta(description="the endpoint's voice")] = "alloy"
    espeak_voice: Annotated[str, Meta(description="espeak-ng's voice, e.g. zh, de")] = "en-us"
    max_chars: Annotated[int, Meta(ge=50, description="longer answers are sent as text only")] = (
        1500
    )
    timeout: Annotated[float, Meta(gt=0, description="s to make one spoken reply")] = 60.0


class BackupSettings(Strict):
    """Archives the daemon makes on its own (`countbot backup create` makes one by hand)."""

    every_hours: Annotated[float, Meta(ge=0, description="hours between backups; 0: off")] = 0.0
    keep: Annotated[int, Meta(ge=1, description="newest archives kept; older ones removed")] = 7
    folder: Annotated[Path, Meta(description="None: <data_dir>/backups")] | None = None
    include_secrets: bool = False


class SecuritySettings(Strict):
    """How data may leave (`countbot doctor --security` explains it; `countbot/dataflow/`)."""

    # After a turn read untrusted content, an outbound call to a destination the owner did not
    # name, or carrying private data, asks the user (ask), is refused (deny) or just runs (off).
    outbound: Literal["ask", "deny", "off"] = "ask"


# --- agents: the assistants besides `main` and the chats each answers (`countbot/agents/`) ---
# `main` is the top-level configuration: a config without `agents:` is one agent, unchanged.
# Every other agent is an entry of `agents.others` with its own workspace and, where it sets them,
# its own sections; what it leaves out it takes from `main`, except the MCP servers and secrets,
# which an agent only has when they are named for it (nothing of the owner's reaches it unasked).

MAIN = "main"
_NAME = r"^[a-z][a-z0-9_-]{0,31}$"


class AgentEntry(Strict):
    """One agent besides `main`: its house and what it differs in."""

    # None: <data_dir>/agents/<name>/workspace (persona files, MEMORY.md, notes, skills).
    workspace: Path | None = None
    enabled: bool = True
    persona: PersonaSettings | None = None
    model: ModelSettings | None = None
    tools: ToolsSettings | None = None
    budget: BudgetSettings | None = None
    # Its own MCP servers only (none of main's).
    mcp: McpSettings = msgspec.field(default_factory=McpSettings)
    # Environment variables its commands get in the sandbox (masked everywhere like any secret).
    secrets: dict[str, SecretStr] = msgspec.field(default_factory=dict)
    # Chats outside its bindings the owner lets its `message` tool reach ("<channel>:<chat_id>").
    may_message: list[str] = msgspec.field(default_factory=list)
    # Its own heartbeat (its workspace's HEARTBEAT.md; a target it may `message`); None: none.
    heartbeat: HeartbeatSettings | None = None


class Binding(Strict):
    """Which agent answers messages that match every field given (None matches anything)."""

    agent: str
    channel: str | None = None
    # The bot account the message reached (one platform may run several bots).
    account: str | None = None
    chat: str | None = None
    sender: str | None = None

    def specificity(self) -> int:
        """How narrow it is: a sender beats a chat beats an account beats a channel."""
        return (
            (8 if self.sender is not None else 0)
            + (4 if self.chat is not None else 0)
            + (2 if self.account is not None else 0)
            + (1 if self.channel is not None else 0)
        )


class AgentsSettings(Strict):
    """The agents besides `main` and the bindings that route messages to them."""

    others: dict[str, AgentEntry] = msgspec.field(default_factory=dict)
    bindings: list[Binding] = msgspec.field(default_factory=list)
    # The agent unbound messages go to; "" refuses them.
    default: Annotated[str, Meta(description="agent for unbound messages; empty: refuse")] = MAIN
    # May `main` itself be switched off (then only its bindings are refused)?
    main_enabled: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in self.others:
            if name == MAIN:
                raise FieldError(
                    "others", "`main` is the top-level configuration; name it otherwise"
                )
            if not re.fullmatch(_NAME, name):
                raise FieldError(
                    "others", f"agent name {name!r}: lowercase letters, digits, - and _ (≤32)"
                )
        known = {MAIN, *self.others}
        for binding in self.bindings:
            if binding.agent not in known:
                raise FieldError("bindings", f"binding to unknown agent {binding.agent!r}")
        if self.default and self.default not in known:
            raise FieldError("default", f"unknown agent {self.default!r}")

    def names(self) -> tuple[str, ...]:
        """Every agent, `main` first."""
        return (MAIN, *self.others)

    def enabled(self, name: str) -> bool:
        if name == MAIN:
            return self.main_enabled
        entry = self.others.get(name)
        return entry is not None and entry.enabled


class Settings(Strict):
    model: ModelSettings = msgspec.field(default_factory=ModelSettings)
    agent: AgentSettings = msgspec.field(default_factory=AgentSettings)
    budget: BudgetSettings = msgspec.field(default_factory=BudgetSettings)
    persona: PersonaSettings = msgspec.field(default_factory=PersonaSettings)
    tools: ToolsSettings = msgspec.field(default_factory=ToolsSettings)
    web: WebSettings = msgspec.field(default_factory=WebSettings)
    gateway: GatewaySettings = msgspec.field(default_factory=GatewaySettings)
    channels: ChannelsSettings = msgspec.field(default_factory=ChannelsSettings)
    scheduler: SchedulerSettings = msgspec.field(default_factory=SchedulerSettings)
    subagents: SubagentSettings = msgspec.field(default_factory=SubagentSettings)
    heartbeat: HeartbeatSettings = msgspec.field(default_factory=HeartbeatSettings)
    skills: SkillsSettings = msgspec.field(default_factory=SkillsSettings)
    mcp: McpSettings = msgspec.field(default_factory=McpSettings)
    memory: MemorySettings = msgspec.field(default_factory=MemorySettings)
    transcription: TranscriptionSettings = msgspec.field(default_factory=TranscriptionSettings)
    speech: SpeechSettings = msgspec.field(default_factory=SpeechSettings)
    triggers: TriggersSettings = msgspec.field(default_factory=TriggersSettings)

    security: SecuritySettings = msgspec.field(default_factory=SecuritySettings)
    backup: BackupSettings = msgspec.field(default_factory=BackupSettings)
    agents: AgentsSettings = msgspec.field(default_factory=AgentsSettings)
    # The live workspace; seeded from the shipped `workspace/` template on first start.
    workspace: Path = Path("data/workspace")
    data_dir: Path = Path("data")
    personas_dir: Path | None = None
    skills_dir: Path | None = None
    timezone: str | None = None

    # Set by the loader, not by the file: where the settings came from (never shown).
    config_path: Path | None = None
