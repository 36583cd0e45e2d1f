"""Several OpenAI-compatible servers sharing one run's queries (issue "backends", item 7: scale-out).

Each request goes to the server with the fewest requests in flight (ties: the first listed), so a fast server
takes more of the work than a slow one. With `concurrency` requests allowed per server and at most
`concurrency × len(servers)` requests in flight in all (the HTTP backend's thread pool), no server ever has
more than `concurrency` in flight. Which server answered never enters the cache key (llm/cache.py), so the
answers are interchangeable as long as every server serves the same model.
"""

from __future__ import annotations

import ipaddress
import threading
from contextlib import contextmanager
from typing import Iterator, Sequence
from urllib.parse import urlsplit

from ..errors import ConfigError

def is_loopback(url: str) -> bool:
    """True when the URL's host is this machine: the name `localhost` or a loopback address (127.0.0.0/8, ::1).

    The host must parse as an IP address: a name such as `127.0.0.1.example.com` is another machine."""
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_urls(urls: Sequence[str], allow_external: bool) -> list[str]:
    """The base URLs without a trailing slash; ConfigError if none, if one is not http(s), or if one is not on
    this machine while `[model] allow_external` is false (protocol: the user must permit sending their text and
    entity names to another machine or provider)."""
    cleaned = [str(u).rstrip("/") for u in urls if str(u).strip()]
    if not cleaned:
        raise ConfigError("[model] base_url (or base_urls) is empty; give the server's URL, "
                          "e.g. base_url = \"http://127.0.0.1:8000/v1\"")
    for url in cleaned:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"[model] base URL {url!r} is not an http(s) URL such as http://127.0.0.1:8000/v1")
        if not allow_external and not is_loopback(url):
            raise ConfigError(
                f"[model] base URL {url!r} is not on this machine: sending your texts and entity names there "
                "needs [model] allow_external = true (confirm the provider may receive them)"
            )
    return cleaned


class ServerPool:
    """Least-loaded choice among base URLs, with per-server counts of answered requests (for the report)."""

    def __init__(self, urls: Sequence[str]):
        self.urls = list(urls)
        self._lock = threading.Lock()
        self._in_flight = [0] * len(self.urls)
        self.answered = [0] * len(self.urls)

    @contextmanager
    def server(self) -> Iterator[str]:
        """Hold one server for one request; it counts as answered only if the request raised nothing."""
        with self._lock:
            index = min(range(len(self.urls)), key=lambda i: (self._in_flight[i], i))
            self._in_flight[index] += 1
        try:
            yield self.urls[index]
            with self._lock:
                self.answered[index] += 1
        finally:
            with self._lock:
                self._in_flight[index] -= 1
