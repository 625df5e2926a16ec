"""Which environment values the compose and Kubernetes importers read as hosts
(`gateway.world.hosts`): a URL's host, `host:port`, a connection string's `Host=`, a bare name
in a host variable; never a database, user or password variable, nor a URL's path or userinfo.
Bug: any word of any value equal to a service name was an edge, so `POSTGRES_DB: orders` on
`ordersdb` made `ordersdb -CALLS-> orders` and a database outage came back inconclusive."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.world.compose import load_compose
from gateway.world.hosts import hosts_in
from gateway.world.kubernetes import load_kubernetes


def edges_of(world) -> set[tuple[str, str, str]]:
    return {(e.source, e.type, e.target) for e in world.edges}


@pytest.mark.parametrize(
    ("var", "value", "hosts"),
    [
        ("DATABASE_URL", "postgres://orders:secret@ordersdb:5432/orders", ["ordersdb"]),
        ("MONGO_URL", "mongodb://ordersdb:27017/orders", ["ordersdb"]),
        ("MONGO_URL", "mongodb://a:27017,b:27017/orders?replicaSet=rs0", ["a", "b"]),
        ("POSTGRES_DB", "orders", []),
        ("POSTGRES_USER", "orders", []),
        ("WORDPRESS_DB_NAME", "wordpress", []),
        ("POSTGRES_PASSWORD", "db:5432", []),  # a data variable, whatever it looks like
        ("DB_TYPE", "postgres", []),  # no host word: a bare value is no host
        ("WORDPRESS_DB_HOST", "db:3306", ["db"]),
        ("DB_HOST", "pg-primary", ["pg-primary"]),
        ("REDIS_HOST", "redis", ["redis"]),
        ("KAFKA_BROKERS", "kafka-1,kafka-2", ["kafka-1", "kafka-2"]),
        ("KAFKA_BROKERS", "kafka-1:9092,kafka-2:9092", ["kafka-1", "kafka-2"]),
        ("ORDERS_API", "orders:8080", ["orders"]),
        ("UPSTREAM", "http://orders:8080/api/orders", ["orders"]),
        ("QUORUM_VOTERS", "1@kafka:9093", ["kafka"]),
        ("DB_CONNECTION_STRING", "Host=pg;Username=orders;Database=orders", ["pg"]),
        ("DB_CONNECTION_STRING", "host=pg user=orders dbname=orders", ["pg"]),
        ("JAVA_OPTS", "-Xmx1g -Dspring.redis.host=cache", ["cache"]),
        ("JAVA_OPTS", "-Durl=jdbc:mysql://db:3306/orders", ["db"]),
        ("SQL", "Server=tcp:sql,1433;Database=orders", ["sql"]),
        ("CALLBACK", "http://web/?next=http://orders:8080/", ["web"]),  # never the query
        ("REV_SERVER", "true", []),
        ("ASPNETCORE_URLS", "http://*:8000", []),
        ("SECRET_PAIR", "orders:1234@db:5432", ["db"]),  # `orders:1234` is a user and password
    ],
)
def test_hosts_are_read_only_where_a_host_is_written(
    var: str, value: str, hosts: list[str]
) -> None:
    assert hosts_in(var, value) == hosts


def test_a_database_name_user_or_url_path_equal_to_a_service_is_no_edge(tmp_path: Path) -> None:
    (tmp_path / "compose.yaml").write_text(
        """
services:
  web: {image: "nginx:1.25", environment: {UPSTREAM: "http://orders:8080"}}
  orders:
    image: acme/orders:1.0
    environment: {DATABASE_URL: "postgres://orders:secret@ordersdb:5432/orders"}
  ordersdb:
    image: postgres:16
    environment: {POSTGRES_DB: orders, POSTGRES_USER: orders, POSTGRES_PASSWORD: secret}
  reports: {image: acme/reports, environment: {MONGO_URL: "mongodb://docs:27017/orders"}}
  docs: {image: "mongo:7"}
  db:
    image: mysql:8.0
    environment: {MYSQL_DATABASE: wordpress, MYSQL_USER: wordpress, MYSQL_PASSWORD: wordpress}
  wordpress:
    image: wordpress:latest
    environment:
      WORDPRESS_DB_HOST: db:3306
      WORDPRESS_DB_USER: wordpress
      WORDPRESS_DB_NAME: wordpress
""",
        encoding="utf-8",
    )
    world, unmapped = load_compose([tmp_path / "compose.yaml"])
    assert edges_of(world) == {
        ("web", "CALLS", "orders"),
        ("orders", "READS_WRITES", "ordersdb"),
        ("reports", "READS_WRITES", "docs"),
        ("wordpress", "READS_WRITES", "db"),
    }
    assert ("ordersdb", "CALLS", "orders") not in edges_of(world)  # POSTGRES_DB / _USER
    assert ("reports", "CALLS", "orders") not in edges_of(world)  # the URL's path /orders
    assert ("db", "CALLS", "wordpress") not in edges_of(world)  # Docker's WordPress sample
    assert unmapped == []


def test_kubernetes_reads_the_same_hosts(tmp_path: Path) -> None:
    (tmp_path / "m.yaml").write_text(
        """
apiVersion: apps/v1
kind: Deployment
metadata: {name: orders}
spec:
  template:
    metadata: {labels: {app: orders}}
    spec:
      containers:
        - name: orders
          image: acme/orders:1
          env:
            - {name: DATABASE_URL, value: "postgres://orders:pw@ordersdb:5432/orders"}
            - {name: PAYMENTS_HOST, value: payments.shop.svc.cluster.local}
---
apiVersion: v1
kind: Service
metadata: {name: orders}
spec: {selector: {app: orders}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: ordersdb}
spec:
  template:
    metadata: {labels: {app: ordersdb}}
    spec:
      containers:
        - name: postgres
          image: postgres:16
          env:
            - {name: POSTGRES_DB, value: orders}
            - {name: POSTGRES_USER, value: orders}
---
apiVersion: v1
kind: Service
metadata: {name: ordersdb}
spec: {selector: {app: ordersdb}}
""",
        encoding="utf-8",
    )
    world, unmapped = load_kubernetes([tmp_path / "m.yaml"])
    assert edges_of(world) == {("orders", "READS_WRITES", "ordersdb")}
    assert unmapped == [
        "orders: PAYMENTS_HOST names host 'payments.shop.svc.cluster.local', no Service"
    ]


def test_env_file_values_are_read_for_hosts_and_a_missing_one_is_reported(
    tmp_path: Path,
) -> None:
    """Bug: an `env_file:`'s variables were used for `${}` only, never read for hosts, so a
    service whose connection strings live there had no edge and no word said so."""
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "orders.env").write_text(
        "MONGO_URL=mongodb://ordersdb:27017/orders\n"
        "CACHE_HOST=cache   # the session cache\n"  # an inline comment, as compose reads it
        "ORDERS_DB=payments\n",  # a database name that is also a service: no edge
        encoding="utf-8",
    )
    (tmp_path / "compose.yaml").write_text(
        """
services:
  orders:
    image: acme/orders
    env_file: [conf/orders.env, {path: conf/optional.env, required: false}]
  billing: {image: acme/billing, env_file: billing.env}
  ordersdb: {image: "mongo:7"}
  cache: {image: "redis:7"}
  payments: {image: acme/payments}
""",
        encoding="utf-8",
    )
    world, unmapped = load_compose([tmp_path / "compose.yaml"])
    assert edges_of(world) == {
        ("orders", "READS_WRITES", "ordersdb"),
        ("orders", "READS_WRITES", "cache"),
    }
    assert unmapped == [
        f"billing: env_file {tmp_path / 'billing.env'} not found, so its variables were not "
        "read for hostnames"
    ]
