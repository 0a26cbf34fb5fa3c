"""What counts as local: loopback peer addresses, loopback ``Host`` headers and loopback binds.

The ``Host`` header is parsed strictly as RFC 3986 / RFC 7230 ``host[:port]`` (one value, ASCII, no
whitespace, no userinfo): a bracketed IPv6 literal followed by nothing but an optional ``:port``, or
a name or dotted-quad IPv4 address; the port is 1 to 5 digits in 1-65535. The shape is a regular
expression; the addresses are parsed by :mod:`ipaddress`, which rejects zone identifiers, leading
zeros and the short forms (``127.1``) a lenient parser would accept. Anything else is not loopback.
"""

from __future__ import annotations

import ipaddress
import re

__all__ = ["is_loopback_address", "is_loopback_bind", "is_loopback_host", "parse_host"]

_LOOPBACK_NAMES = frozenset({"localhost", "localhost."})
_HOST = re.compile(r"(?:\[(?P<ipv6>[0-9A-Fa-f:.]+)\]|(?P<name>[0-9A-Za-z.-]+))(?::(?P<port>[0-9]{1,5}))?")
_MAX_PORT = 65535

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def parse_host(value: str) -> Address | str | None:
    """The host of a well-formed ``host[:port]``: an address, or a lower-cased name; else ``None``."""
    match = _HOST.fullmatch(value)
    if match is None or (match["port"] is not None and not 1 <= int(match["port"]) <= _MAX_PORT):
        return None
    if match["ipv6"] is not None:
        try:
            return ipaddress.IPv6Address(match["ipv6"])
        except ValueError:
            return None
    try:
        return ipaddress.IPv4Address(match["name"])
    except ValueError:
        return match["name"].lower()


def is_loopback_host(values: list[str]) -> bool:
    """Exactly one ``Host`` value, well-formed, naming ``localhost`` or a loopback address."""
    if len(values) != 1:
        return False
    host = parse_host(values[0])
    if host is None:
        return False
    return host in _LOOPBACK_NAMES if isinstance(host, str) else _is_loopback(host)


def is_loopback_address(value: str | None) -> bool:
    """A peer address (as the ASGI server reports it): ``127.0.0.0/8``, ``::1`` or IPv4-mapped loopback."""
    if not value:
        return False
    try:
        return _is_loopback(ipaddress.ip_address(value))
    except ValueError:
        return False


def is_loopback_bind(host: str) -> bool:
    """The address a server binds to: ``localhost`` or a loopback address."""
    return host == "localhost" or is_loopback_address(host)


def _is_loopback(address: Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback
