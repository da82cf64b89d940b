"""Read `config.yaml` into `Settings`, write changes back, and show settings without secrets.

Where the file is: `--config`, else `$COUNTBOT_CONFIG`, else `config.yaml` in the instance
folder (`$COUNTBOT_HOME`, else `~/.countbot`; see `instance.py`), which may be absent: then
every default applies. The checkout's own `config.yaml` is the example and is never written.
String values may use `${VAR}` / `${VAR:-default}`, and `${secret:NAME}` for an entry of
`secrets.yaml` beside the config (`secrets_file.py`). `$COUNTBOT_HOST` and `$COUNTBOT_PORT`
beat the file's `web.host` and `web.port` (`countbot run --host/--port` sets them), so a first
start can listen elsewhere without an edited copy of the example.
Relative `workspace`, `data_dir`, `personas_dir` and `skills_dir` resolve against the config
file's folder; unset `personas_dir` / `skills_dir` mean the `personas/` and `skills/` folders
shipped in the repository beside the `countbot` package. These functions do blocking file I/O:
call them before the event loop starts or through `asyncio.to_thread`.
"""

from __future__ import annotations

import copy
import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from countbot.config import env_vars, fields, secrets_file, yaml_text
from countbot.config.errors import ConfigError
from countbot.config.fields import Loc, dotted
from countbot.config.file_write import replace_file
from countbot.config.instance import SHIPPED_ROOT, default_config, refuse_example
from countbot.config.problems import explain, show
from countbot.config.secret import SecretStr
from countbot.config.settings import Settings
from countbot.config.structs import Invalid, Strict, replaced, to_data, validate
from countbot.config.yaml_errors import explain_yaml_error

__all__ = [
    "CONFIG_ENV_VAR",
    "HOST_ENV_VAR",
    "MASK",
    "PORT_ENV_VAR",
    "SHIPPED_ROOT",
    "ConfigError",
    "config_path_from",
    "load_settings",
    "masked_settings",
    "save_settings_patch",
]

CONFIG_ENV_VAR = "COUNTBOT_CONFIG"
HOST_ENV_VAR = "COUNTBOT_HOST"
PORT_ENV_VAR = "COUNTBOT_PORT"
# What a secret looks like outside the process; sent back unchanged, it means "keep the secret".
MASK = "********"
# Secrets this long are also hidden where they appear inside other values (a key in a URL).
_MIN_EMBEDDED_SECRET = 8
_ABSENT = object()

_NO_MODEL = """\
No model is configured: set `model.name` in {where}.
`model.name` is a litellm model name; add `model.api_key` (best as ${{ENV_VAR}}) and, for
self-hosted or proxy servers, `model.api_base`. For example:

  model:
    name: gpt-4o-mini                      # OpenAI
    api_key: ${{OPENAI_API_KEY}}

  model:
    name: anthropic/claude-sonnet-4-5      # Anthropic
    api_key: ${{ANTHROPIC_API_KEY}}

  model:
    name: deepseek/deepseek-chat           # DeepSeek
    api_key: ${{DEEPSEEK_API_KEY}}

  model:
    name: ollama_chat/llama3.1             # Ollama on this machine, no key needed
    api_base: http://localhost:11434

  model:
    name: openai/my-model                  # any OpenAI-compatible server
    api_base: https://llm.example.com/v1
    api_key: ${{MY_LLM_API_KEY}}

`countbot onboard` writes a starter config for you. The file is chosen by --config, else
${env_var}, else config.yaml in $COUNTBOT_HOME (default ~/.countbot)."""


def config_path_from(cli_path: str | None, env: Mapping[str, str] = os.environ) -> Path:
    """The config file to use: `--config`, else `$COUNTBOT_CONFIG`, else the instance's."""
    chosen = cli_path or env.get(CONFIG_ENV_VAR)
    return Path(chosen).expanduser() if chosen else default_config(env)


def load_settings(
    path: Path | None = None,
    *,
    env: Mapping[str, str] | None = None,
    require_model: bool = False,
    need_secrets: bool = True,
) -> Settings:
    """Validated settings from `path` (default: `config_path_from(None, env)`), paths resolved.

    Only the instance's default config may be missing (its folder is then the base of the
    relative paths). Every problem in the file is reported in one
    `ConfigError`. `config_path` is set to the absolute file path, even for a missing default, so
    a settings page knows where to save. With `need_secrets=False` (commands that only talk to
    the running daemon or the store) an unset `${VAR}` is no error: the value keeps the reference.
    """
    env = os.environ if env is None else env
    chosen = config_path_from(None, env) if path is None else Path(path)
    file = _absolute(chosen)
    if file.is_file():
        secrets = secrets_file.read_secrets(secrets_file.secrets_path(file))
        settings = _validate(
            _parse(_read(file), file), file, env, secrets, need_secrets=need_secrets
        )
        base = file.parent
    elif file.exists():
        raise ConfigError(f"The config file {file} is not a regular file.")
    elif file == default_config(env):
        settings, base = Settings(), file.parent
    else:
        origin = f" (from ${CONFIG_ENV_VAR})" if path is None else ""
        raise ConfigError(
            f"The config file {file}{origin} does not exist. Fix the path, or run "
            "`countbot onboard` to write a starter config."
        )
    settings = _resolve_paths(settings, base, file)
    settings = _listen_where_told(settings, env)
    if require_model and not settings.model.name.strip():
        where = file if file.exists() else f"{file} (it does not exist yet)"
        raise ConfigError(_NO_MODEL.format(where=where, env_var=CONFIG_ENV_VAR))
    return settings


def save_settings_patch(
    path: Path,
    patch: Mapping[str, Any],
    *,
    references: bool = False,
    need_secrets: bool = True,
    removed: Sequence[Loc] = (),
) -> None:
    """Apply a nested patch to the YAML file at `path`: validated first, written atomically.

    A value equal to what `masked_settings` currently shows for it is "unchanged", so masked
    secrets (`MASK`), `${VAR}` references and untouched defaults survive a form round trip; ""
    or None for a secret clears it. Comments survive when every change replaces a value already
    written in the file; otherwise the file is rewritten from its data and its comments are lost.

    What the patch brings is literal: `${VAR}` in it is written escaped and never expanded (a
    persona named `${OPENAI_API_KEY}` is just that name). A new secret goes into `secrets.yaml`
    (mode 0600) and the config gets only its reference, `${secret:model.api_key}`.
    `references=True` is for the owner's own command line (never for the API): references in
    the patch are written as references, and a secret given as one stays in the config.
    `need_secrets=False` accepts `${VAR}` references whose variables are not set yet (onboard).
    `removed` names entries to delete whole (an MCP server), with the secrets stored for them.
    """
    file = _absolute(path)
    target = Path(os.path.realpath(file))  # write through a symlinked config, not over it
    refuse_example(target)
    text = _read(target) if target.exists() else ""
    document = _parse(text, file)
    raw = _require_mapping(document.data, file)
    try:
        shown: Mapping[str, Any] = masked_settings(load_settings(file, need_secrets=need_secrets))
    except ConfigError:
        shown = {}
    changes = _changes(patch, shown, ())
    if not changes and not removed:
        return
    secrets_at = secrets_file.secrets_path(file)
    old_secrets = secrets_file.read_secrets(secrets_at)
    secrets = dict(old_secrets)
    changes = [_written(loc, value, secrets, references) for loc, value in changes]
    merged = _apply(raw, changes)
    for loc in removed:
        _remove(merged, loc)
        under = dotted(loc)
        for name in [n for n in secrets if n == under or n.startswith((f"{under}.", f"{under}["))]:
            del secrets[name]
    # Duplicated keys stay an error: the file must be fixed by hand before it can be patched.
    document_after = yaml_text.YamlDocument(merged, None, document.duplicates)
    _validate(document_after, file, os.environ, secrets, need_secrets=need_secrets)
    new_text = None if removed else yaml_text.replace_values(text, document.root, changes)
    if new_text is None or _parse(new_text, file).data != merged:
        new_text = yaml.safe_dump(merged, sort_keys=False, allow_unicode=True)
    if secrets != old_secrets:
        secrets_file.write_secrets(secrets_at, secrets)
    _write_atomic(target, new_text)


def write_config_text(path: Path, text: str) -> None:
    """Replace the config file with `text` (for appending a whole section): validated first,
    written atomically, through a symlink."""
    file = _absolute(path)
    refuse_example(file)
    secrets = secrets_file.read_secrets(secrets_file.secrets_path(file))
    _validate(_parse(text, file), file, os.environ, secrets)
    _write_atomic(Path(os.path.realpath(file)), text)


def masked_settings(settings: Settings) -> dict[str, Any]:
    """The settings as a JSON-ready dict in which every secret reads `MASK` ("" when unset)."""
    secrets: list[str] = []
    data = to_data(settings)
    for key in fields.LOADER_ONLY:
        data.pop(key, None)
    data = _mask_section(settings, data, (), secrets)
    embedded = [secret for secret in secrets if len(secret) >= _MIN_EMBEDDED_SECRET]
    return _scrub(data, embedded)


def _absolute(path: Path) -> Path:
    # abspath, not resolve(): a symlinked config keeps its own folder as the base of its paths.
    return Path(os.path.abspath(Path(path).expanduser()))


def _read(file: Path) -> str:
    try:
        return file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"Cannot read the config file {file}: {err}") from None


def _parse(text: str, source: Path) -> yaml_text.YamlDocument:
    try:
        return yaml_text.parse(text)
    except yaml.YAMLError as err:
        raise ConfigError(explain_yaml_error(err, text, str(source))) from None


def _validate(
    document: yaml_text.YamlDocument,
    source: Path,
    env: Mapping[str, str],
    secrets: Mapping[str, str],
    *,
    need_secrets: bool = True,
) -> Settings:
    """Interpolate and validate parsed YAML, raising one `ConfigError` listing every problem."""
    data, missing = env_vars.interpolate(_require_mapping(document.data, source), env, secrets)
    problems = [(ref.loc, _missing_variable(ref)) for ref in missing if need_secrets]
    data = fields.drop_empty_sections(data)
    problems += _loader_problems(data)
    settings = None
    try:
        settings = validate(Settings, data)
    except Invalid as err:
        unresolved = {ref.loc for ref in missing}
        for problem in err.problems:
            # A value still holding an unset ${VAR} is already reported as such.
            if problem.loc not in unresolved or problem.kind == "unknown":
                problems.append((problem.loc, explain(problem)))
    lined = [
        (dup.line, f"duplicate key `{dotted(dup.loc)}` (first written on line {dup.first_line})")
        for dup in document.duplicates
    ]
    lined += [(yaml_text.line_of(document.root, loc), text) for loc, text in problems]
    if settings is None or lined:
        lined.sort(key=lambda item: item[0] if item[0] is not None else float("inf"))
        raise ConfigError.listing(
            source, [f"line {line}: {text}" if line else text for line, text in lined]
        )
    return settings


def _loader_problems(data: dict[str, Any]) -> list[tuple[Loc, str]]:
    """What the schema cannot check itself; drops `config_path`, which only the loader sets."""
    problems: list[tuple[Loc, str]] = []
    for key in fields.LOADER_ONLY & data.keys():
        problems.append(((key,), f"`{key}` is set by countbot, not in the file; remove it"))
        del data[key]
    timezone = data.get("timezone")
    if isinstance(timezone, str) and timezone and not _is_time_zone(timezone):
        problems.append(
            (("timezone",), f"`timezone` is not a known time zone (got {show(timezone)})")
        )
    return problems


def _require_mapping(data: Any, source: Path) -> dict[str, Any]:
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"Invalid configuration in {source}: the file must hold `key: value` settings, "
            f"not {show(data)}"
        )
    return data


def _missing_variable(ref: env_vars.MissingVariable) -> str:
    if ref.secret:
        return (
            f"`{dotted(ref.loc)}` uses ${{secret:{ref.name}}}, but {secrets_file.FILE_NAME} "
            f"beside the config file has no entry `{ref.name}` (type the key again on the "
            "settings page, or add the entry)"
        )
    return (
        f"`{dotted(ref.loc)}` uses ${{{ref.name}}}, but the environment variable {ref.name} "
        f"is not set (set it, or write ${{{ref.name}:-default}})"
    )


def _is_time_zone(name: str) -> bool:
    import zoneinfo  # with sysconfig: only a config that names a zone needs it now

    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return False
    return True


def _resolve_paths(settings: Settings, base: Path, config_path: Path) -> Settings:
    def under_base(path: Path) -> Path:
        return Path(os.path.abspath(base / path.expanduser()))

    others = {
        name: replaced(entry, workspace=under_base(entry.workspace))
        for name, entry in settings.agents.others.items()
        if entry.workspace is not None
    }
    agents = replaced(settings.agents, others=settings.agents.others | others)
    return replaced(
        settings,
        workspace=under_base(settings.workspace),
        data_dir=under_base(settings.data_dir),
        agents=agents,
        personas_dir=under_base(settings.personas_dir or SHIPPED_ROOT / "personas"),
        skills_dir=under_base(settings.skills_dir or SHIPPED_ROOT / "skills"),
        config_path=config_path,
    )


def _listen_where_told(settings: Settings, env: Mapping[str, str]) -> Settings:
    """`web.host`/`web.port` from `$COUNTBOT_HOST`/`$COUNTBOT_PORT` when set. Applied at every
    load, so a config edit seen while the daemon runs does not look like a changed `web`."""
    told = {
        field: env[name]
        for field, name in (("host", HOST_ENV_VAR), ("port", PORT_ENV_VAR))
        if env.get(name, "").strip()
    }
    if not told:
        return settings
    web = {name: getattr(settings.web, name) for name in settings.web.__struct_fields__}
    try:
        return replaced(settings, web=validate(type(settings.web), web | told, loc=("web",)))
    except Invalid as exc:
        said = "; ".join(explain(problem) for problem in exc.problems)
        raise ConfigError(
            f"Where to listen, from --host/--port or ${HOST_ENV_VAR}/${PORT_ENV_VAR}: {said}."
        ) from None


def _changes(patch: Mapping[str, Any], shown: Any, loc: Loc) -> list[tuple[Loc, Any]]:
    """The leaves of `patch` that really change something, with secrets cleared as None."""
    changes: list[tuple[Loc, Any]] = []
    for key, value in patch.items():
        here = (*loc, key)
        current = shown.get(key, _ABSENT) if isinstance(shown, Mapping) else _ABSENT
        if isinstance(value, Mapping):
            changes += _changes(value, current, here)
            continue
        if value in (MASK, current):
            continue
        if isinstance(value, str) and MASK in value:
            raise ConfigError(
                f"`{dotted(here)}` still contains the masked placeholder {MASK}; type the whole "
                "value again",
            )
        changes.append((here, None if fields.is_secret(here) and value == "" else value))
    return changes


def _remove(raw: dict[str, Any], loc: Loc) -> None:
    """Delete the entry at `loc` from the file's data (nothing when it is not there)."""
    section: Any = raw
    for part in loc[:-1]:
        section = section.get(part) if isinstance(section, dict) else None
    if isinstance(section, dict):
        section.pop(loc[-1], None)


def _written(loc: Loc, value: Any, secrets: dict[str, str], references: bool) -> tuple[Loc, Any]:
    """What a change writes into the config: a secret's reference (the value goes to `secrets`,
    a cleared one leaves it) or the value made literal (kept as given with `references`)."""
    if references and (not fields.is_secret(loc) or "${" in str(value)):
        return loc, value
    if not fields.is_secret(loc):
        return loc, env_vars.literal(value)
    name = dotted(loc)
    if value is None:
        secrets.pop(name, None)
        return loc, None
    secrets[name] = str(value)
    return loc, secrets_file.reference(name)


def _apply(raw: dict[str, Any], changes: list[tuple[Loc, Any]]) -> dict[str, Any]:
    merged = copy.deepcopy(raw)
    for loc, value in changes:
        section = merged
        for part in loc[:-1]:
            if not isinstance(section.get(part), dict):
                section[part] = {}
            section = section[part]
        section[loc[-1]] = value
    return merged


def _write_atomic(target: Path, text: str) -> None:
    """Readers see the old file or the new one, never half of it; the file keeps its mode."""
    try:
        # A new file gets owner-only access: it may hold API keys.
        mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else 0o600
    except OSError as err:
        raise ConfigError(f"Cannot write the config file {target}: {err}") from None
    replace_file(target, text, mode, "config file")


def _mask_section(
    section: Strict, data: dict[str, Any], loc: Loc, secrets: list[str]
) -> dict[str, Any]:
    for name in data:
        value = getattr(section, name)
        if isinstance(value, Strict):
            _mask_section(value, data[name], (*loc, name), secrets)
        elif fields.is_secret((*loc, name)):
            secret = value.get_secret_value() if isinstance(value, SecretStr) else ""
            data[name] = MASK if secret else ""
            if secret:
                secrets.append(secret)
    return data


def _scrub(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, dict):
        return {key: _scrub(item, secrets) for key, item in value.items()}
    if isinstance(value, list):
        return [_scrub(item, secrets) for item in value]
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, MASK)
    return value
