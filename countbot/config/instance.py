"""Where a user's instance lives, so that running CountBot never writes into the checkout.

The instance folder holds what is the user's own: `config.yaml` (what the settings page saves),
`secrets.yaml` beside it (mode 0600), and by default `data/` (the store, the audit log, pulled
models) with the live workspace in `data/workspace`. Without `--config` or `$COUNTBOT_CONFIG`
it is `$COUNTBOT_HOME`, else `~/.countbot`; with them, the named file's folder.

The checkout's `config.yaml` is the documented example and is never written: the instance's
own config starts as a copy of it (`create_from_example`, on the daemon's first start), and the
loader refuses to save into it. The checkout's `workspace/`, `personas/` and `skills/` are
templates and defaults that are copied or read, never written.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import countbot
from countbot.config.errors import ConfigError

__all__ = [
    "CONFIG_NAME",
    "EXAMPLE_CONFIG",
    "HOME_ENV_VAR",
    "SHIPPED_ROOT",
    "create_from_example",
    "default_config",
    "instance_home",
    "refuse_example",
]

HOME_ENV_VAR = "COUNTBOT_HOME"
# The checkout (or source tree) that holds the package and the shipped personas/ and skills/.
SHIPPED_ROOT = Path(countbot.__file__).resolve().parent.parent
EXAMPLE_CONFIG = SHIPPED_ROOT / "config.yaml"
CONFIG_NAME = "config.yaml"
# The instance's config may come to hold keys typed by hand: owner only, like secrets.yaml.
_MODE = 0o600


def instance_home(env: Mapping[str, str] = os.environ) -> Path:
    """The default instance folder: `$COUNTBOT_HOME`, else `~/.countbot`."""
    chosen = env.get(HOME_ENV_VAR)
    return Path(chosen).expanduser() if chosen else Path.home() / ".countbot"


def default_config(env: Mapping[str, str] = os.environ) -> Path:
    """The config file used when neither `--config` nor `$COUNTBOT_CONFIG` names one."""
    return Path(os.path.abspath(instance_home(env) / CONFIG_NAME))


def create_from_example(config: Path) -> bool:
    """Make `config` a private copy of the shipped example if it does not exist yet.

    Returns whether it was created. A missing example (an installed wheel carries none) leaves
    no file: every default applies and the settings page creates the file on its first save.
    Blocking file I/O: call before the event loop starts.
    """
    if config.exists() or not EXAMPLE_CONFIG.is_file():
        return False
    try:
        config.parent.mkdir(parents=True, exist_ok=True)
        with open(config, "x", encoding="utf-8") as out:
            os.fchmod(out.fileno(), _MODE)
            out.write(EXAMPLE_CONFIG.read_text(encoding="utf-8"))
    except FileExistsError:
        return False
    except OSError as err:
        raise ConfigError(f"Cannot create the config file {config}: {err}") from None
    return True


def refuse_example(target: Path) -> None:
    """Raise if `target` is the shipped example: an instance never writes the checkout."""
    if EXAMPLE_CONFIG.exists() and Path(os.path.realpath(target)) == EXAMPLE_CONFIG.resolve():
        raise ConfigError(
            f"{target} is the documented example shipped with CountBot and is never written. "
            f"Run without --config to keep your settings in {default_config()} "
            f"(or ${HOME_ENV_VAR}/{CONFIG_NAME}), or copy the example elsewhere and name it."
        )
