"""Pairing codes: one live code per sender, an hour to approve it, approval survives."""

from __future__ import annotations

from collections.abc import Callable

from countbot.store.database import Database
from countbot.store.pairing import CODE_TTL, PairingStore, SenderInfo

MALLORY = SenderInfo("555", "mallory", "Mallory")
T0 = 1_700_000_000.0


def codes(*values: str) -> Callable[[], str]:
    """A draw function handing out `values` in order."""
    supply = iter(values)
    return lambda: next(supply)


async def test_a_sender_gets_one_code_per_hour(db: Database) -> None:
    store = PairingStore(db)
    assert await store.offer("telegram", MALLORY, codes("ABC234"), T0) == "ABC234"
    assert await store.offer("telegram", MALLORY, codes("XYZ789"), T0 + CODE_TTL - 1) is None
    assert await store.offer("telegram", MALLORY, codes("XYZ789"), T0 + CODE_TTL) == "XYZ789"
    assert [r.code for r in await store.pending(T0 + CODE_TTL)] == ["XYZ789"]


async def test_approving_a_live_code_pairs_its_sender(db: Database) -> None:
    store = PairingStore(db)
    await store.offer("telegram", MALLORY, codes("ABC234"), T0)

    assert await store.approve("discord", "ABC234", T0) is None, "codes belong to one channel"
    paired = await store.approve("telegram", " abc234 ", T0 + 60)

    assert paired is not None and paired.sender == MALLORY
    assert await store.is_paired("telegram", "555")
    assert not await store.is_paired("discord", "555")
    assert await store.pending(T0 + 60) == []
    assert await store.approve("telegram", "ABC234", T0 + 61) is None, "a code works once"
    assert [p.sender for p in await store.paired()] == [MALLORY]


async def test_an_expired_code_cannot_be_approved(db: Database) -> None:
    store = PairingStore(db)
    await store.offer("telegram", MALLORY, codes("ABC234"), T0)
    assert await store.approve("telegram", "ABC234", T0 + CODE_TTL) is None
    assert not await store.is_paired("telegram", "555")


async def test_a_code_in_use_is_never_handed_to_a_second_sender(db: Database) -> None:
    store = PairingStore(db)
    await store.offer("telegram", MALLORY, codes("ABC234"), T0)
    eve = SenderInfo("777")
    assert await store.offer("telegram", eve, codes("ABC234", "DEF567"), T0) == "DEF567"
