"""Typed settings validated from `config.yaml`.

Every model forbids unknown keys so a typo is reported instead of silently ignored. Key names are
part of the public contract (scripts and docs rely on them).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    field_validator,
    model_validator,
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class LocalModelSettings(_Strict):
    """How a `local/` model runs in its child server (small-machine defaults)."""

    context_size: int = Field(4096, ge=256, description="tokens of context the server keeps")
    threads: int = Field(0, ge=0, description="CPU threads; 0: half the cores, at most 4")
    cache_ram_mb: int = Field(256, ge=0, description="RAM for the server's prompt cache, MiB")
    models_dir: Path | None = Field(None, description="None: <data_dir>/models")


class ModelSettings(_Strict):
    name: str = ""
    api_base: str | None = None
    api_key: SecretStr | None = None
    temperature: float = Field(0.7, ge=0.0, le=2.0)
    max_tokens: int = Field(4096, ge=1)
    fallbacks: list[str] = Field(default_factory=list)
    request_timeout: float = Field(120.0, gt=0, description="hard deadline for one model call, s")
    max_retries: int = Field(3, ge=0, description="retries of one model call on 429/5xx/timeouts")
    vision: bool | None = Field(None, description="None: look it up in the model map")
    context_window: int | None = Field(
        None, ge=1024, description="tokens; None: the model map's, else a conservative default"
    )
    # direct: CountBot's own OpenAI-compatible client (no litellm); litellm: every provider
    # litellm knows; auto: direct when the model string or api_base says OpenAI-compatible.
    provider_path: Literal["auto", "direct", "litellm"] = "auto"
    # native: the provider's own tool calls; constrained: JSON output matching a schema of "one
    # tool call or an answer" (for models without reliable tool calling); auto: constrained for
    # local/ models, native otherwise.
    tool_calls: Literal["native", "constrained", "auto"] = "auto"
    local: LocalModelSettings = Field(default_factory=LocalModelSettings)


class AgentSettings(_Strict):
    max_iterations: int = Field(25, ge=1)
    max_retries: int = Field(3, ge=0)
    retry_delay: float = Field(1.0, ge=0.0)
    max_history: int = Field(60, ge=4)
    tool_timeout: float = Field(60.0, gt=0)
    # Share of the model's context window a request may fill (less max_tokens for the answer).
    context_budget: float = Field(0.8, gt=0.1, le=1.0)
    # Tokens of tool schemas a request may carry; past it, MCP servers' tools are offered only
    # when the message names their server or is about them (`agent/toolset.py`).
    tool_budget: int = Field(4000, ge=0)


class BudgetSettings(_Strict):
    """Hard limits on model spending; each is optional (None: no limit). Days are local days."""

    daily_tokens: int | None = Field(None, ge=1, description="tokens per day, all sessions")
    daily_cost: float | None = Field(None, gt=0, description="US dollars per day")
    session_tokens: int | None = Field(None, ge=1, description="tokens per session per day")
    turn_tokens: int | None = Field(None, ge=1, description="tokens one turn may use")


class PersonaSettings(_Strict):
    preset: str = "assistant"
    name: str | None = None
    user_address: str | None = None
    personality: str | None = None
    language: str | None = None


def _regular_expressions(patterns: list[str]) -> list[str]:
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"{pattern!r} is not a valid regular expression ({exc})") from None
    return patterns


Patterns = Annotated[list[str], AfterValidator(_regular_expressions)]


class ExecSettings(_Strict):
    timeout: float = Field(60.0, gt=0)
    deny_patterns: Patterns = Field(default_factory=list)
    # Commands that run without asking in approval mode `on-miss`; never past the built-in guard.
    allow_patterns: Patterns = Field(default_factory=list)
    max_output: int = Field(30_000, ge=1000)
    # auto: bubblewrap when it works here, else every command asks (fail closed); off: explicit.
    sandbox: Literal["auto", "bwrap", "off"] = "auto"
    network: bool = Field(True, description="commands in the sandbox may use the network")
    # auto: run in the sandbox without asking; on-miss: ask unless allow-listed; always: ask.
    approval: Literal["auto", "on-miss", "always"] = "auto"
    approval_timeout: float = Field(120.0, gt=0, description="s to wait for an answer; then deny")


class WebToolSettings(_Strict):
    allow_private: bool = False
    max_bytes: int = Field(2_000_000, ge=1000)
    timeout: float = Field(20.0, gt=0)
    search_backend: Literal["none", "brave", "searxng"] = "none"
    search_api_key: SecretStr | None = None
    search_url: str | None = None


class ToolsSettings(_Strict):
    restrict_to_workspace: bool = True
    exec: ExecSettings = Field(default_factory=ExecSettings)
    web: WebToolSettings = Field(default_factory=WebToolSettings)


class WebSettings(_Strict):
    """The daemon's web server: `web.host`, `web.port` and `web.token` are fixed names."""

    host: str = "127.0.0.1"
    port: int = Field(8686, ge=0, le=65535)
    # Required on any non-loopback host; then every /api call and /ws must present it.
    token: SecretStr | None = None
    # Origins allowed besides the daemon's own (e.g. a reverse proxy's public URL).
    allowed_origins: list[str] = Field(default_factory=list)
    max_frame_bytes: int = Field(1_048_576, ge=1024, description="largest WebSocket frame, bytes")
    # Host names (and addresses) the daemon answers to besides its bound address and, on
    # loopback, localhost: the names a browser uses to reach it (DNS rebinding guard).
    allowed_hosts: list[str] = Field(default_factory=list)
    max_body_bytes: int = Field(1_048_576, ge=1024, description="largest /api request body")
    max_header_bytes: int = Field(65_536, ge=4096, description="largest request head, bytes")
    shutdown_grace: float = Field(10.0, ge=0, description="s running turns get on SIGTERM")


class GatewaySettings(_Strict):
    """How turns are scheduled: one at a time per session, with a watchdog."""

    queue_mode: Literal["followup", "steer", "interrupt"] = "followup"
    turn_deadline: float = Field(600.0, gt=0, description="s before a turn is stopped")


class SchedulerSettings(_Strict):
    """Scheduled jobs: how many run at once, how long one may take, how late one may start."""

    max_concurrent_jobs: int = Field(2, ge=1)
    job_timeout: float = Field(600.0, gt=0, description="s one job's turn may take")
    # A run missed (daemon down, machine asleep) by up to this long still runs, once.
    misfire_grace_seconds: int = Field(300, ge=0)


class SubagentSettings(_Strict):
    """Background subagents: how deep they nest, how many run at once, how long one may take."""

    max_depth: int = Field(1, ge=0, description="spawn levels; 0 turns the spawn tool off")
    max_concurrent: int = Field(3, ge=1, description="subagents running at once; others queue")
    max_iterations: int = Field(15, ge=1, description="model calls and tool calls per subagent")
    timeout: float = Field(600.0, gt=0, description="s one subagent may run before it is stopped")


# "HH:MM-HH:MM", wrapping past midnight when the end is earlier than the start.
_QUIET_HOURS = r"^([01]?\d|2[0-3]):[0-5]\d-([01]?\d|2[0-3]):[0-5]\d$"
# "<channel>:<chat_id>", "web", or empty for nowhere.
_TARGET = r"^(|web|[A-Za-z0-9_.-]+:\S+)$"


class HeartbeatSettings(_Strict):
    """The assistant reaching out on its own, driven by the tasks in <workspace>/HEARTBEAT.md."""

    enabled: bool = False
    interval_minutes: int = Field(60, ge=1)
    quiet_hours: str | None = Field("23:00-07:00", pattern=_QUIET_HOURS)
    target: str = Field("", pattern=_TARGET)
    daily_cap: int = Field(12, ge=0, description="beats that may call the model per day")


class SkillsSettings(_Strict):
    """Skills switched off on the Skills page, remembered across restarts."""

    disabled: list[str] = Field(default_factory=list)


class McpServerSettings(_Strict):
    """One MCP server: a command started over stdio, or a streamable-HTTP `url`."""

    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, SecretStr] = Field(default_factory=dict, description="the server's only env")
    url: str | None = None
    headers: dict[str, SecretStr] = Field(default_factory=dict)
    enabled: bool = True
    tools: list[str] | None = Field(None, description="allow-list of the server's tools")
    approval: Literal["auto", "always"] = "auto"
    timeout: float = Field(60.0, gt=0, description="s one tool call may take")

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerSettings:
        if (self.command is None) == (self.url is None):
            raise ValueError("set exactly one of `command` (stdio) or `url` (streamable HTTP)")
        return self


class McpSettings(_Strict):
    """MCP servers whose tools the agent may call, by name (`<name>__<tool>`)."""

    servers: dict[str, McpServerSettings] = Field(default_factory=dict)

    @field_validator("servers")
    @classmethod
    def _names(cls, servers: dict[str, McpServerSettings]) -> dict[str, McpServerSettings]:
        for name in servers:
            if not re.fullmatch(r"[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*", name) or len(name) > 30:
                raise ValueError(
                    f"server name {name!r}: use up to 30 letters, digits, - and single _ "
                    "(tools are named <server>__<tool>)"
                )
        return servers


class ChannelSettings(_Strict):
    """What every chat channel has: on/off, who may talk to it, and a flood limit."""

    enabled: bool = False
    # User ids or usernames; default deny. ["*"] opens the channel to everyone explicitly.
    allow_from: list[str] = Field(default_factory=list)
    rate_limit_per_minute: int = Field(20, ge=1, description="messages a sender may send a minute")
    # Where the platform edits messages in place, how often the streaming answer is updated.
    stream_edit_interval: float = Field(1.0, ge=0.05, description="s between draft edits")
    # mention: in groups, answer only when mentioned or replied to; ignore: private chats only.
    group_mode: Literal["mention", "ignore"] = "mention"


class TelegramSettings(ChannelSettings):
    """`channels.telegram`; `enabled`, `token`, `allow_from`, `proxy`, `base_url` are fixed."""

    token: SecretStr | None = None
    proxy: str | None = None
    # The Bot API base URLs exactly as python-telegram-bot takes them (self-hosted servers, tests).
    base_url: str = "https://api.telegram.org/bot"
    base_file_url: str = "https://api.telegram.org/file/bot"
    poll_timeout: int = Field(30, ge=0, le=50, description="s one long-poll request waits")


class QQSettings(ChannelSettings):
    """`channels.qq`: the OneBot v11 reverse WebSocket a QQ client (NapCat, LLOneBot) connects to.

    The endpoint is CountBot's own listener, separate from the web UI's port: the QQ client is
    no browser, and a token of its own keeps the web UI's token out of the QQ client's config.
    """

    access_token: SecretStr | None = None
    host: str = "127.0.0.1"
    port: int = Field(6199, ge=0, le=65535, description="port the QQ client connects to")
    path: str = "/onebot/v11/ws"


class FeishuSettings(ChannelSettings):
    """`channels.feishu`: a Feishu (or Lark) app's bot over the long connection (no public URL)."""

    app_id: str | None = None
    app_secret: SecretStr | None = None
    # https://open.feishu.cn for Feishu, https://open.larksuite.com for Lark.
    domain: str = "https://open.feishu.cn"


class DingTalkSettings(ChannelSettings):
    """`channels.dingtalk`: a DingTalk app's robot in Stream mode (no public URL)."""

    client_id: str | None = None
    client_secret: SecretStr | None = None
    # The OpenAPI (Stream connections, robot messages) and the older API (media uploads).
    endpoint: str = "https://api.dingtalk.com"
    oapi_endpoint: str = "https://oapi.dingtalk.com"


class WeComSettings(ChannelSettings):
    """`channels.wecom`: a WeCom (企业微信) AI bot over its long connection (no public URL)."""

    bot_id: str | None = None
    secret: SecretStr | None = None
    ws_url: str = "wss://openws.work.weixin.qq.com"


class SlackSettings(ChannelSettings):
    """`channels.slack`: a Slack app's bot over Socket Mode (no public URL)."""

    bot_token: SecretStr | None = None  # xoxb-: the Web API
    app_token: SecretStr | None = None  # xapp- with connections:write: Socket Mode
    # The Web API base; Socket Mode asks it for its WebSocket URL too.
    api_url: str = "https://slack.com/api/"


class DiscordSettings(ChannelSettings):
    """`channels.discord`: a Discord bot over the gateway WebSocket (no public URL)."""

    token: SecretStr | None = None
    # The REST API and the gateway exactly as discord.py takes them (tests point them at a fake).
    api_url: str = "https://discord.com/api/v10"
    gateway_url: str = "wss://gateway.discord.gg/"


class EmailSettings(ChannelSettings):
    """`channels.email`: the assistant's own mailbox, IMAP in and SMTP out."""

    address: str | None = None
    username: str | None = None  # defaults to the address
    password: SecretStr | None = None
    imap_host: str | None = None
    imap_port: int = Field(993, ge=1, le=65535)
    imap_security: Literal["ssl", "starttls", "none"] = "ssl"
    smtp_host: str | None = None
    smtp_port: int = Field(465, ge=1, le=65535)
    smtp_security: Literal["ssl", "starttls", "none"] = "ssl"
    mailbox: str = "INBOX"
    poll_interval: float = Field(60.0, ge=1, le=1500, description="s between looks for new mail")
    # Whose Authentication-Results header counts (your provider's host); None: the topmost one.
    authserv_id: str | None = None
    require_authentication: bool = True


class ChannelsSettings(_Strict):
    telegram: TelegramSettings = Field(default_factory=TelegramSettings)
    qq: QQSettings = Field(default_factory=QQSettings)
    feishu: FeishuSettings = Field(default_factory=FeishuSettings)
    dingtalk: DingTalkSettings = Field(default_factory=DingTalkSettings)
    wecom: WeComSettings = Field(default_factory=WeComSettings)
    slack: SlackSettings = Field(default_factory=SlackSettings)
    discord: DiscordSettings = Field(default_factory=DiscordSettings)
    email: EmailSettings = Field(default_factory=EmailSettings)


class MemorySettings(_Strict):
    """The memory index over notes and past conversations (`countbot/memory_index/`)."""

    # use-multilingual: offline (the Universal Sentence Encoder, multilingual v3, shipped in the
    # `memory` extra); endpoint: an OpenAI-compatible /embeddings URL; off: full-text only.
    embeddings: Literal["use-multilingual", "endpoint", "off"] = "use-multilingual"
    embeddings_url: str | None = Field(None, description="base URL of the /embeddings endpoint")
    embeddings_model: str = "text-embedding-3-small"
    embeddings_api_key: SecretStr | None = None
    embeddings_idle: float = Field(
        300.0, ge=1.0, le=86_400.0, description="seconds unused before the model's process ends"
    )
    recall: bool = Field(True, description="put the best few memory hits into each turn")
    recall_tokens: int = Field(400, ge=50, le=4000, description="token budget of auto-recall")

    @field_validator("embeddings", mode="before")
    @classmethod
    def _former_model(cls, value: object) -> object:
        """`wordllama` named the offline model before USE replaced it: it means the offline one."""
        return "use-multilingual" if value == "wordllama" else value


class TranscriptionSettings(_Strict):
    """Voice notes to text: the offline recognizer of `countbot[voice]` (English) unless
    `api_base` names an OpenAI-compatible endpoint (`<api_base>/audio/transcriptions`)."""

    enabled: bool = True
    api_base: str | None = None
    api_key: SecretStr | None = None
    model: str = "whisper-1"
    language: str | None = Field(None, description="ISO-639-1 hint for the endpoint, e.g. 'zh'")
    max_seconds: int = Field(300, ge=1, le=3600, description="longest voice note transcribed, s")
    max_bytes: int = Field(20_000_000, ge=1000, description="largest audio file transcribed")
    timeout: float = Field(
        120.0, gt=0, description="s one transcription may take (offline: plus 4 s per audio s)"
    )


class SpeechSettings(_Strict):
    """Spoken replies: on channels that take voice notes (Telegram), each answer also arrives as
    one, from an OpenAI-compatible `<api_base>/audio/speech` endpoint, else espeak-ng."""

    enabled: bool = False
    api_base: str | None = None
    api_key: SecretStr | None = None
    model: str = "tts-1"
    voice: str = Field("alloy", description="the endpoint's voice")
    espeak_voice: str = Field("en-us", description="espeak-ng's voice, e.g. zh, de")
    max_chars: int = Field(1500, ge=50, description="longer answers are sent as text only")
    timeout: float = Field(60.0, gt=0, description="s to make one spoken reply")


class SecuritySettings(_Strict):
    """How data may leave (`countbot doctor --security` explains it; `countbot/dataflow/`)."""

    # After a turn read untrusted content, an outbound call to a destination the owner did not
    # name, or carrying private data, asks the user (ask), is refused (deny) or just runs (off).
    outbound: Literal["ask", "deny", "off"] = "ask"


class Settings(_Strict):
    model: ModelSettings = Field(default_factory=ModelSettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    budget: BudgetSettings = Field(default_factory=BudgetSettings)
    persona: PersonaSettings = Field(default_factory=PersonaSettings)
    tools: ToolsSettings = Field(default_factory=ToolsSettings)
    web: WebSettings = Field(default_factory=WebSettings)
    gateway: GatewaySettings = Field(default_factory=GatewaySettings)
    channels: ChannelsSettings = Field(default_factory=ChannelsSettings)
    scheduler: SchedulerSettings = Field(default_factory=SchedulerSettings)
    subagents: SubagentSettings = Field(default_factory=SubagentSettings)
    heartbeat: HeartbeatSettings = Field(default_factory=HeartbeatSettings)
    skills: SkillsSettings = Field(default_factory=SkillsSettings)
    mcp: McpSettings = Field(default_factory=McpSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    transcription: TranscriptionSettings = Field(default_factory=TranscriptionSettings)
    speech: SpeechSettings = Field(default_factory=SpeechSettings)

    security: SecuritySettings = Field(default_factory=SecuritySettings)
    # The live workspace; seeded from the shipped `workspace/` template on first start.
    workspace: Path = Path("data/workspace")
    data_dir: Path = Path("data")
    personas_dir: Path | None = None
    skills_dir: Path | None = None
    timezone: str | None = None

    # Set by the loader, not by the file: where the settings came from.
    config_path: Path | None = Field(None, exclude=True)
