"""Which hostnames an environment variable names: the rule the compose and Kubernetes importers
share (docs/world.md, "Which environment values are hosts").

A hostname is read only where a host is written:

- the host of a URL, `scheme://[user[:password]@]host[:port][/path][?query]` (every host of a
  `mongodb://a:27017,b:27017/db` list); never its user, password, path or query;
- a `host:port` pair outside a URL (`orders:8080`, `1@kafka:9093`, `a:9092,b:9092`);
- a connection-string field whose key is a host, server or address (`Host=db;Database=x`,
  `host=db dbname=x`, `-Dspring.redis.host=cache`, `Data Source=db,1433`);
- in a variable whose name ends in a host word (`*_HOST`, `*_HOSTS`, `*_HOSTNAME`, `*_ADDR`,
  `*_ADDRESS`, `*_SERVER(S)`, `*_ENDPOINT(S)`, `*_URL(S)`, `*_URI(S)`, `*_BROKER(S)`, `*_DSN`),
  a value that is exactly a hostname, or a list of them split by commas, semicolons or spaces.

A variable whose name ends in a data word (`*_DB`, `*_DATABASE`, `*_DBNAME`, `*_USER`,
`*_USERNAME`, `*_NAME`, `*_PASSWORD`, `*_PASSWD`, `*_TOPIC`, ...) names no host at all, whatever
its value: `POSTGRES_DB: orders` is a database, not the service `orders`.
"""

from __future__ import annotations

import re

#: Last words of a variable name whose value may be a bare hostname (or a list of them).
HOST_WORDS = frozenset(
    {"HOST", "HOSTS", "HOSTNAME", "HOSTNAMES", "ADDR", "ADDRS", "ADDRESS", "ADDRESSES",
     "SERVER", "SERVERS", "ENDPOINT", "ENDPOINTS", "URL", "URLS", "URI", "URIS",
     "BROKER", "BROKERS", "DSN"}
)  # fmt: skip
#: Last words of a variable name whose value is data (a database, a user, a secret, a name),
#: never a host, even when it looks like one.
DATA_WORDS = frozenset(
    {"DB", "DATABASE", "DBNAME", "SCHEMA", "USER", "USERNAME", "LOGIN", "NAME", "PASSWORD",
     "PASSWD", "PASS", "PWD", "SECRET", "TOKEN", "KEY", "TOPIC", "QUEUE", "BUCKET", "INDEX",
     "TABLE", "COLLECTION", "EMAIL"}
)  # fmt: skip
#: Hosts that are the container itself or the machine running it: no dependency.
LOCAL = frozenset({"localhost", "0.0.0.0", "127.0.0.1", "::1", "host.docker.internal"})  # noqa: S104

_SCHEME = r"[A-Za-z][A-Za-z0-9+.-]*://"
_HOSTNAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
#: A URL: `scheme://` (`jdbc:mysql://` has `mysql://`), an optional `user[:password]@`, the
#: authority (group 1: `host[:port]`, or a comma list of them), then its path and query up to
#: a space, a quote, or a comma that starts the next URL of a list.
_URL = re.compile(
    rf"{_SCHEME}(?:[^\s/?#@\"']*@)?([^\s/?#@\"',;]*(?:,(?!{_SCHEME})[^\s/?#@\"',;:]+(?::\d+)?)*)"
    rf"(?:[/?#;](?:,(?!{_SCHEME})|[^\s\"',])*)?"
)
#: `host:port` outside a URL: not inside a longer word, not followed by `@` (a `user:1234@`).
_HOSTPORT = re.compile(rf"(?<![\w.:/-])({_HOSTNAME}):\d{{1,5}}(?![\w@.:-])")
#: `key=value` fields (`;`, `&`, space or start separated) whose key's last word is a host word.
_FIELD = re.compile(
    r"(?:^|[\s;&])(?:[\w.-]*[._-])?(?:host|hostname|server|address|addr|data source)\s*=\s*"
    r"(?:tcp:)?([^\s;&,:]+)",
    re.IGNORECASE,
)
#: Values of a host variable that switch something, not name a host (`REV_SERVER=true`).
_NOT_HOSTS = frozenset({"true", "false", "yes", "no", "on", "off", "none", "null", "auto"})
_WHOLE = re.compile(rf"{_HOSTNAME}(?::\d{{1,5}})?")
_SPLIT = re.compile(r"[\s,;]+")
_WORDS = re.compile(r"[^A-Za-z0-9]+")


def last_word(var: str) -> str:
    """The last word of a variable name, upper case (`WORDPRESS_DB_HOST` -> `HOST`)."""
    words = [w for w in _WORDS.split(var) if w]
    return words[-1].upper() if words else ""


def hosts_in(var: str, value: str) -> list[str]:
    """The hostnames `value` (of the variable `var`) names, in order, each once, by the rule
    of this module's docstring; `[]` for a data variable. Local hosts and IP addresses are
    included (the caller decides: they are no service). Pure."""
    word = last_word(var)
    if word in DATA_WORDS:
        return []
    found: list[str] = []
    for match in _URL.finditer(value):
        for part in match.group(1).split(","):
            found.append(_strip_port(part))
    rest = _URL.sub(" ", value)  # a URL's user, password, path and query stay unread
    found += _HOSTPORT.findall(rest)
    found += _FIELD.findall(rest)
    if word in HOST_WORDS:
        items = [item for item in _SPLIT.split(value.strip()) if item]
        if items and all(_WHOLE.fullmatch(item) for item in items):
            found += [_strip_port(item) for item in items if item.lower() not in _NOT_HOSTS]
    return [h for h in dict.fromkeys(found) if h and re.fullmatch(_HOSTNAME, h)]


def is_external(host: str) -> bool:
    """Whether `host` is worth reporting when it names no service: not local, not an IP."""
    return host not in LOCAL and not re.fullmatch(r"[\d.]+", host)


def _strip_port(part: str) -> str:
    host, _, port = part.rpartition(":")
    return host if host and port.isdigit() else part
