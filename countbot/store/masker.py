"""What the store needs from a secret masker (countbot.common.masking.SecretMasker fits)."""

from __future__ import annotations

from typing import Any, Protocol


class Masker(Protocol):
    def mask(self, text: str) -> str:
        """`text` with every known secret replaced by a placeholder."""
        ...

    def mask_obj(self, obj: Any) -> Any:
        """A copy of a JSON-like object with secrets masked in every string inside it."""
        ...
