"""Typed settings validated from `config.yaml`.

Every model forbids unknown keys so a typo is reported instead of silently ignored. Key names are
part of the public contract (scripts and docs rely on them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


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
    # direct: CountBot's own OpenAI-compatible client (no litellm); litellm: every provider
    # litellm knows; auto: direct when the model string or api_base says OpenAI-compatible.
    provider_path: Literal["auto", "direct", "litellm"] = "auto"


class AgentSettings(_Strict):
    max_iterations: int = Field(25, ge=1)
    max_retries: int = Field(3, ge=0)
    retry_delay: float = Field(1.0, ge=0.0)
    max_history: int = Field(60, ge=4)
    tool_timeout: float = Field(60.0, gt=0)


class PersonaSettings(_Strict):
    preset: str = "assistant"
    name: str | None = None
    user_address: str | None = None
    personality: str | None = None
    language: str | None = None


class ExecSettings(_Strict):
    timeout: float = Field(60.0, gt=0)
    deny_patterns: list[str] = Field(default_factory=list)
    # Commands that run without asking in approval mode `on-miss`; never past the built-in guard.
    allow_patterns: list[str] = Field(default_factory=list)
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


class Settings(_Strict):
    model: ModelSettings = Field(default_factory=ModelSettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    persona: PersonaSettings = Field(default_factory=PersonaSettings)
    tools: ToolsSettings = Field(default_factory=ToolsSettings)
    web: WebSettings = Field(default_factory=WebSettings)
    gateway: GatewaySettings = Field(default_factory=GatewaySettings)
    channels: ChannelsSettings = Field(default_factory=ChannelsSettings)
    scheduler: SchedulerSettings = Field(default_factory=SchedulerSettings)
    heartbeat: HeartbeatSettings = Field(default_factory=HeartbeatSettings)
    skills: SkillsSettings = Field(default_factory=SkillsSettings)
    # The live workspace; seeded from the shipped `workspace/` template on first start.
    workspace: Path = Path("data/workspace")
    data_dir: Path = Path("data")
    personas_dir: Path | None = None
    skills_dir: Path | None = None
    timezone: str | None = None

    # Set by the loader, not by the file: where the settings came from.
    config_path: Path | None = Field(None, exclude=True)
