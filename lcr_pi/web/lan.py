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
from pathlib import Path

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


#: Name endings that only a local network gives out (mDNS, the special-use names, routers' own).
LOCAL_NAME_SUFFIXES = (".local", ".localhost", ".home.arpa", ".internal", ".lan", ".home", ".localdomain")


def search_domains(resolv_conf: str = "/etc/resolv.conf") -> tuple[str, ...]:
    """The DNS search domains the router gave this machine (``search``/``domain`` in resolv.conf, e.g.
    "fritz.box", "attlocal.net"): the page's own names end in them. Empty when the file cannot be read."""
    try:
        lines = Path(resolv_conf).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ()
    domains = []
    for line in lines:
        words = line.split()
        if words and words[0] in ("search", "domain"):
            domains += [w.strip(".").lower() for w in words[1:] if w.strip(".")]
    return tuple(domains)


def is_local_host(host_header: str, *, domains: tuple[str, ...] = (), own_names: tuple[str, ...] = ()) -> bool:
    """Whether a request's ``Host`` names this machine as the local network knows it: an address, a
    name without a dot ("raspberrypi"), one under a local ending ("raspberrypi.local"), under a search
    domain of this machine, or one of its own names. A page of another site whose name was pointed at
    the Pi (DNS rebinding) sends that site's name, which is none of these.

    >>> [is_local_host(h) for h in ("192.168.1.5:8080", "[fe80::1]:8080", "raspberrypi", "pi.local:8080")]
    [True, True, True, True]
    >>> is_local_host("evil.example:8080"), is_local_host("pi.fritz.box", domains=("fritz.box",))
    (False, True)
    """
    host = host_header.strip().lower()
    if host.startswith("["):  # [v6]:port
        host = host[1:].split("]", 1)[0]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    host = host.rstrip(".")
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
        return True
    except ValueError:
        pass
    if not host:
        return False
    if "." not in host or host.endswith(LOCAL_NAME_SUFFIXES) or host in {n.lower().rstrip(".") for n in own_names}:
        return True
    return any(host == d or host.endswith("." + d) for d in domains)


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
