"""Property: whatever the config file holds, loading ends in settings or one clear ConfigError.

Random YAML documents, random text, and random mutations of the shipped config.yaml go through
the same path as `countbot run` (load, then the start-up checks); nothing may raise anything else.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from countbot.config.instance import EXAMPLE_CONFIG
from countbot.config.loader import ConfigError, load_settings
from countbot.config.settings import Settings
from countbot.runtime.preflight import check_settings

SHIPPED = EXAMPLE_CONFIG.read_text(encoding="utf-8")  # read once, before any test runs
FAST = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**200, max_value=10**300),
    st.floats(allow_nan=True),
    st.text(max_size=30),
)
keys = st.one_of(
    st.sampled_from(
        [
            "model",
            "name",
            "web",
            "host",
            "port",
            "token",
            "tools",
            "exec",
            "deny_patterns",
            "persona",
            "preset",
            "data_dir",
            "workspace",
            "agent",
        ]
    ),
    st.text(max_size=10),
)
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=5)),
    max_leaves=25,
)


def outcome(folder: Path, text: str) -> Settings | ConfigError:
    path = folder / "config.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        loaded = load_settings(path, env={})
        check_settings(loaded)
    except ConfigError as exc:
        assert str(exc).strip(), "a ConfigError must say what is wrong"
        return exc
    return loaded


@FAST
@given(data=documents)
def test_random_documents_load_or_fail_clearly(tmp_path: Path, data: object) -> None:
    outcome(tmp_path, yaml.safe_dump(data, allow_unicode=True))


@FAST
@given(text=st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=300))
def test_random_text_loads_or_fails_clearly(tmp_path: Path, text: str) -> None:
    outcome(tmp_path, text)


@st.composite
def mutated_config(draw: st.DrawFn) -> str:
    text = SHIPPED
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        kind = draw(st.sampled_from(["delete", "insert", "duplicate", "replace"]))
        if kind == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 40)) :]
        elif kind == "insert":
            piece = draw(
                st.sampled_from(
                    [
                        "&a ",
                        "*a",
                        "[",
                        "{",
                        ": ",
                        "\n  - ",
                        "9" * 5000,
                        "${X}",
                        "'",
                        "\t",
                        "<<: *a",
                        "-1",
                        "\n",
                    ]
                )
                | st.text(max_size=5)
            )
            text = text[:at] + piece + text[at:]
        elif kind == "duplicate":
            lines = text.splitlines(keepends=True)
            line = draw(st.integers(0, len(lines) - 1))
            text = "".join(lines[: line + 1] + lines[line:])
        else:
            value = draw(scalars)
            text = text[:at] + yaml.safe_dump(value).removesuffix("\n...\n") + text[at + 3 :]
    return text


@FAST
@given(text=mutated_config())
def test_mutations_of_the_shipped_config_load_or_fail_clearly(tmp_path: Path, text: str) -> None:
    outcome(tmp_path, text)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (
            "a: &a [x,x,x,x,x,x,x,x,x]\n"
            + "".join(
                f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n"
                for p, n in zip("abcdef", "bcdefg", strict=True)
            ),
            "aliases expand",
        ),
        ("model: " + "[" * 200 + "]" * 200, "nested more than"),
        ("model:\n  max_tokens: " + "9" * 5000, "5000 digits"),
        ("tools:\n  exec:\n    allow_patterns: ['(a']", "not a valid regular expression"),
        ("persona:\n  preset: no-such-preset", "unknown persona preset"),
        ("data_dir: config.yaml", "is a file"),
        ("workspace: config.yaml/inside", "which is a file"),
    ],
)
def test_hostile_configs_fail_with_one_message(tmp_path: Path, text: str, says: str) -> None:
    result = outcome(tmp_path, text)
    assert isinstance(result, ConfigError) and says in str(result), result


def test_the_shipped_config_loads(tmp_path: Path) -> None:
    assert isinstance(outcome(tmp_path, SHIPPED), Settings)
