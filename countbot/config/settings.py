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


class TelegramSettings(ChannelSettings):
    """`channels.telegram`; `enabled`, `token`, `allow_from`, `proxy`, `base_url` are fixed."""

    token: SecretStr | None = None
    proxy: str | None = None
    # The Bot API base URLs exactly as python-telegram-bot takes them (self-hosted servers, tests).
    base_url: str = "https://api.telegram.org/bot"
    base_file_url: str = "https://api.telegram.org/file/bot"
    # mention: in groups, answer only when mentioned or replied to; ignore: private chats only.
    group_mode: Literal["mention", "ignore"] = "mention"
    poll_timeout: int = Field(30, ge=0, le=50, description="s one long-poll request waits")


class ChannelsSettings(_Strict):
    telegram: TelegramSettings = Field(default_factory=TelegramSettings)


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
