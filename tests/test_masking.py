"""SecretMasker: registered values and well-known token shapes never survive, ordinary text does."""

from __future__ import annotations

import pytest

from countbot.masking import MASK, SecretMasker

SECRETS = [
    ("sk-abcdefghijklmnopqrstuvwx", "sk-a"),
    ("sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "sk-a"),
    ("sk-proj-0123456789abcdefghijABCDEFGHIJ", "sk-p"),
    ("123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0", "1234"),
    ("ghp_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ", "ghp_"),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "gith"),
    ("AKIAIOSFODNN7EXAMPLE", "AKIA"),
    ("xoxb-1234567890-abcdefghijkl", "xoxb"),
    ("AIzaSyA1234567890abcdefghijklmnopqrstuv", "AIza"),
]


@pytest.mark.parametrize(("secret", "prefix"), SECRETS)
def test_token_shapes_are_masked_keeping_a_short_prefix(secret: str, prefix: str) -> None:
    masked = SecretMasker().mask(f"the key is {secret} ok")
    assert secret not in masked
    assert masked == f"the key is {prefix}{MASK} ok"


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (
            "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig",
            "eyJhbGciOiJIUzI1NiJ9.payload.sig",
        ),
        ("api_key=abcd1234efgh&x=1", "abcd1234efgh"),
        ("OPENAI_API_KEY=hunter2hunter2", "hunter2hunter2"),
        ('{"password": "correct horse battery"}', "correct horse battery"),
        ("db_passwd: s3cr3tvalue", "s3cr3tvalue"),
        ("SECRET_TOKEN: 'abcdef123456'", "abcdef123456"),
        ("{'client_secret': 'q1w2e3r4t5'}", "q1w2e3r4t5"),
    ],
)
def test_values_of_secret_named_keys_are_masked(text: str, secret: str) -> None:
    masked = SecretMasker().mask(text)
    assert secret not in masked
    assert MASK in masked


def test_the_key_name_and_surrounding_text_stay_readable() -> None:
    masked = SecretMasker().mask('config: {"api_key": "abcdefgh12345678", "model": "gpt-4o"}')
    assert masked == f'config: {{"api_key": "abcd{MASK}", "model": "gpt-4o"}}'


def test_ordinary_configuration_and_prose_are_left_alone() -> None:
    text = (
        "max_tokens: 4096\ntotal_tokens=123456\nThe password policy is strict.\n"
        "Run `git status` and read https://example.com/docs?page=2.\nsk-short\n"
    )
    assert SecretMasker().mask(text) == text


def test_registered_values_are_masked_and_short_ones_ignored() -> None:
    masker = SecretMasker(["my-very-own-key-42"])
    masker.add("short")
    masked = masker.mask("keys: my-very-own-key-42, short")
    assert "my-very-own-key-42" not in masked
    assert masked == f"keys: my-v{MASK}, short"


def test_a_value_registered_later_is_masked_from_then_on() -> None:
    masker = SecretMasker()
    assert masker.mask("token-like value plainvalue123") == "token-like value plainvalue123"
    masker.add("plainvalue123")
    assert "plainvalue123" not in masker.mask("token-like value plainvalue123")


def test_private_key_blocks_are_masked_whole() -> None:
    pem = (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq98s+AbCdEfGhIjKlMnOp\n"
        "QrStUvWxYz0123456789abcdefABCDEFGHIJ\n-----END RSA PRIVATE KEY-----"
    )
    masked = SecretMasker().mask(f"before\n{pem}\nafter")
    assert "AbCdEfGhIjKlMnOp" not in masked and "QrStUvWxYz" not in masked
    assert masked.startswith("before\n-----BEGIN RSA PRIVATE KEY-----")
    assert masked.endswith("-----END RSA PRIVATE KEY-----\nafter")


def test_a_private_key_cut_in_half_by_truncation_is_still_masked() -> None:
    head = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE\n"
    tail = "AAAAB3NzaC1yc2EAAAADAQABAAABAQC1xyz\n-----END OPENSSH PRIVATE KEY-----\n"
    masker = SecretMasker()
    assert "b3BlbnNzaC1yZXktdjEAAAAABG5vbmUAAAAE" not in masker.mask(head)
    masked_tail = masker.mask("… [100 bytes omitted] …\n" + tail)
    assert "AAAAB3NzaC1yc2EAAAADAQABAAABAQC1xyz" not in masked_tail
    assert "-----END OPENSSH PRIVATE KEY-----" in masked_tail


def test_mask_obj_masks_nested_data_and_secret_named_keys_of_any_length() -> None:
    record = {
        "arguments": {"api_key": "abc", "query": "weather", "n": 3},
        "result": ["ok", "sk-abcdefghijklmnopqrstuvwx"],
        "pair": ("token", "x"),
    }
    masked = SecretMasker().mask_obj(record)
    assert masked == {
        "arguments": {"api_key": MASK, "query": "weather", "n": 3},
        "result": ["ok", f"sk-a{MASK}"],
        "pair": ("token", "x"),
    }
    assert record["arguments"]["api_key"] == "abc"  # the original is untouched


def test_contains_secret() -> None:
    masker = SecretMasker(["registered-value"])
    assert masker.contains_secret("x registered-value y")
    assert masker.contains_secret("ghp_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ")
    assert not masker.contains_secret("/usr/local/bin:/usr/bin")


def test_large_output_without_secrets_comes_back_unchanged() -> None:
    text = ("a-b.c_d " * 10_000) + ("token" * 10_000) + ("0123456789abcdef" * 10_000)
    assert SecretMasker().mask(text) == text
