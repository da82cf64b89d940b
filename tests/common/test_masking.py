"""SecretMasker: registered values and well-known token shapes never survive, ordinary text does."""

from __future__ import annotations

import base64
import threading

import pytest

from countbot.common.masking import MASK, SecretMasker

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
    ("sk-or-v1-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "sk-o"),
    ("sk-0123456789abcdef0123456789abcdef", "sk-0"),  # DeepSeek
    ("gsk_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ", "gsk_"),
    ("hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "hf_a"),
    ("sk_live_51HabcdefghijklmnopqrstuvWXYZ", "sk_l"),
    ("rk_live_51HabcdefghijklmnopqrstuvWXYZ", "rk_l"),
    ("ASIAIOSFODNN7EXAMPLE", "ASIA"),
    ("gho_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ", "gho_"),
    ("ghs_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ", "ghs_"),
    ("glpat-abcdefghijklmnopqrst", "glpa"),
    ("xoxp-1234567890-abcdefghijkl", "xoxp"),
    ("xapp-1-A0123456789-0123456789-abcdef", "xapp"),
    (
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
        "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "eyJh",
    ),
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
        (
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        ),
        ("    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVk=", "LS0tLS1CRUdJTiBSU0Eg"),
        ("    token: kube-token-0123456789abcdef", "kube-token-0123456789abcdef"),
        ('{"auths": {"ghcr.io": {"auth": "dXNlcjpodW50ZXIy"}}}', "dXNlcjpodW50ZXIy"),
        ("machine api.example.com login alice password hunter2!", "hunter2!"),
        ("machine example.com\n  login bob\n  password s3cr3tpw\n", "s3cr3tpw"),
        ("postgres://app:Sup3rS3cret@db.internal:5432/app", "Sup3rS3cret"),
        ("https://user:p%40ss-w0rd@example.com/repo.git", "p%40ss-w0rd"),
        ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="),
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
        "author: Ada Lovelace\nA basic understanding helps. Call task-runner-0123456789abcdef.\n"
        "ssh://git@github.com:org/repo.git and mailto:someone@example.com\n"
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


def test_url_credentials_keep_the_user_and_host() -> None:
    masked = SecretMasker().mask("clone https://alice:hunter2hunter2@git.example.com/x.git")
    assert masked == f"clone https://alice:hun{MASK}@git.example.com/x.git"


def test_pgp_private_key_blocks_are_masked() -> None:
    block = (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF1234567890abcdefABCDEF\n"
        "-----END PGP PRIVATE KEY BLOCK-----"
    )
    masked = SecretMasker().mask(block)
    assert "lQOYBF1234567890abcdefABCDEF" not in masked
    assert masked.endswith("-----END PGP PRIVATE KEY BLOCK-----")


@pytest.mark.parametrize("prefix", [b"", b"x", b"xy", b"KEY=", b'{"k": "'])
def test_base64_of_a_registered_value_is_masked_at_any_offset(prefix: bytes) -> None:
    secret = "my-registered-key-0123456789"
    masker = SecretMasker([secret])
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        encoded = encode(prefix + secret.encode() + b"\n").decode()
        masked = masker.mask(f"output: {encoded}")
        assert MASK in masked and encoded not in masked
        # What is left of the encoding holds at most a few bytes of the value.
        assert encoded[len(prefix) + 12 : -12] not in masked


HOSTILE = [
    "sk-" + "a" * 1_000_000,
    "eyJ-" * 250_000,
    "eyJa.eyJa." * 100_000,
    "https://" + "a" * 1_000_000,
    "a://b:" * 170_000,
    "login a password " * 60_000,
    "-----BEGIN RSA PRIVATE KEY-----\n" * 30_000,
    "token" * 200_000,
    "token = " + '"' + "x" * 1_000_000,
    "api_key:" * 125_000,
    "Bearer " * 140_000,
    "1234567890:" * 90_000,
    "password \n" * 100_000,
    "AKIA" * 250_000,
    "-" * 1_000_000,
]


def test_hostile_megabyte_inputs_are_masked_in_linear_time() -> None:
    """A generous bound, not a benchmark: a quadratic pattern would take minutes here."""
    masker = SecretMasker(["registered-secret-value"])
    done: list[int] = []

    def work() -> None:
        for text in HOSTILE:
            masker.mask(text)
            done.append(len(text))

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(timeout=60)
    assert len(done) == len(HOSTILE), f"stuck on hostile input #{len(done)}"
