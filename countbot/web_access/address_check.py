"""Which IP addresses web tools may reach: public ones only, IPv4 hidden inside IPv6 included.

An IPv6 address can carry an IPv4 one: IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible
(`::a.b.c.d`), IPv4-translated (`::ffff:0:a.b.c.d`), NAT64 (`64:ff9b::a.b.c.d`), 6to4
(`2002:AABB:CCDD::`) and Teredo (`2001:0:server:…:client`, the client obfuscated). A host that
routes these (a NAT64 gateway, a 6to4 relay, the kernel for mapped addresses) delivers to the IPv4
address, so each embedded address is checked as if it had been asked for itself. The local-use
NAT64 prefix `64:ff9b:1::/48` (RFC 8215) translates into the operator's own network: refused
whatever it embeds.
"""

from __future__ import annotations

import ipaddress

_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
_IPV4_IN_LAST_32 = ipaddress.IPv6Network("::/96")  # IPv4-compatible (deprecated)
_IPV4_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")

IP = ipaddress.IPv4Address | ipaddress.IPv6Address


def address_refusal(address: str) -> str | None:
    """Why `address` must not be fetched (private, loopback, link-local, ...), or None."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address):
        if ip in _NAT64_LOCAL:
            return f"{address} is a local-use NAT64 address"
        for inner in embedded_ipv4(ip):
            kind = _kind(inner)
            if kind is not None:
                return f"{address}, which embeds {inner}, {kind}"
    kind = _kind(ip)
    return None if kind is None else f"{address} is {kind}"


def embedded_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses a transition mechanism would deliver `ip` to."""
    found = [ip.ipv4_mapped, ip.sixtofour]
    if ip.teredo is not None:
        found.extend(ip.teredo)
    last_32 = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip in _NAT64 or ip in _IPV4_TRANSLATED or (ip in _IPV4_IN_LAST_32 and int(ip) > 1):
        found.append(last_32)
    return [inner for inner in found if inner is not None]


def _kind(ip: IP) -> str | None:
    """What kind of non-public address `ip` is, or None for a public one."""
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_multicast:
        return "a multicast address"
    if not ip.is_global:
        return "a private or reserved address"
    return None
