"""Where the scoreboard may listen and whom it serves: the local network only, unless allowed otherwise.

"LAN only" means: the page answers clients whose address is loopback (127.0.0.0/8, ::1), private
(10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, IPv6 unique-local fc00::/7) or link-local (169.254.0.0/16,
fe80::/10), and it refuses to bind to any other (public) address. Binding to all interfaces (``0.0.0.0``
or ``::``) is allowed: requests from outside those ranges are then refused with 403, so a router that
forwards the port from the internet does not expose the table.

>>> is_lan_address("192.168.1.20"), is_lan_address("::ffff:10.0.0.7"), is_lan_address("8.8.8.8")
(True, True, False)
>>> parse_bind("8080"), parse_bind("127.0.0.1:8000"), parse_bind("[::1]:9000")
(('0.0.0.0', 8080), ('127.0.0.1', 8000), ('::1', 9000))
>>> parse_bind("pi:http")
Traceback (most recent call last):
...
lcr_pi.errors.UserError: --web: 'http' is not a port number (use HOST:PORT, e.g. 0.0.0.0:8080)
"""

from __future__ import annotations

import ipaddress
import socket

from lcr_pi.errors import UserError

LAN_NETWORKS = tuple(ipaddress.ip_network(n) for n in (
    "127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16",
    "::1/128", "fc00::/7", "fe80::/10",
))

ALL_INTERFACES = ("", "0.0.0.0", "::")

LAN_DESCRIPTION = ("loopback, 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 169.254.0.0/16, "
                   "fc00::/7 and fe80::/10")


def is_lan_address(address: str) -> bool:
    """Whether a client or bind address is on this machine or the local network."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])  # drop an IPv6 zone such as %wlan0
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return any(ip in net for net in LAN_NETWORKS if net.version == ip.version)


def parse_bind(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT`` or ``PORT`` (all interfaces, LAN clients only); IPv6 as ``[::1]:PORT``."""
    text = text.strip()
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "", text
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not (port.isascii() and port.isdigit()) or not 0 <= int(port) <= 65535:
        raise UserError(f"--web: {port!r} is not a port number (use HOST:PORT, e.g. 0.0.0.0:8080)")
    return (host or "0.0.0.0"), int(port)


def check_bind(host: str, *, allow_public: bool = False) -> None:
    """Refuse a public bind address unless ``allow_public``; a host name must resolve to LAN addresses."""
    if allow_public or host in ALL_INTERFACES:
        return
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise UserError(f"scoreboard address: cannot find the address of {host!r} ({exc.strerror})") from None
    for *_, sockaddr in infos:
        if not is_lan_address(sockaddr[0]):
            raise UserError(
                f"scoreboard address {host} ({sockaddr[0]}) is not on the local network; the scoreboard serves only "
                f"{LAN_DESCRIPTION}. Set web.allow_public = true in the config to allow it."
            )
