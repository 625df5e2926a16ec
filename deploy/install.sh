#!/usr/bin/env bash
# Install Blast Radius as systemd services (Debian 12 / Ubuntu 22.04+, as root). Idempotent:
# rerun it to upgrade. What it does:
#   - the system user `blast-radius` (systemd-sysusers, deploy/systemd/blast-radius.sysusers)
#   - /var/lib/blast-radius (data: FalkorDB files, outbox, metrics), /etc/blast-radius
#   - a venv in /opt/blast-radius/venv with this checkout installed (source copy in .../src)
#   - the units in /etc/systemd/system, and /etc/blast-radius/env from .env.example (mode
#     0600, owned by the service user) unless it exists: your edits are never overwritten
# It starts nothing; it prints the next steps.
#
# Environment:
#   DESTDIR=/tmp/root      install into a throwaway root (tests, packaging); nothing is started
#   PYTHON=python3         the Python (3.11+) the venv is made from
#   FALKORDB_PORT=6380     port of the FalkorDB unit, written into a new env file's FALKORDB_URL
#   BLAST_VENV_ARGS=...    extra `python -m venv` arguments (tests: --system-site-packages)
#   BLAST_PIP_ARGS=...     extra `pip install` arguments (tests: --no-deps --no-build-isolation)
set -euo pipefail

DESTDIR=${DESTDIR:-}
PYTHON=${PYTHON:-python3}
FALKORDB_PORT=${FALKORDB_PORT:-6380}
read -r -a VENV_ARGS <<<"${BLAST_VENV_ARGS:-}"
read -r -a PIP_ARGS <<<"${BLAST_PIP_ARGS:-}"

SRC=$(cd "$(dirname "$0")/.." && pwd)
NAME=blast-radius
PREFIX=/opt/blast-radius
DATA=/var/lib/blast-radius
CONF=/etc/blast-radius
UNITS=/etc/systemd/system
root() { printf '%s%s' "$DESTDIR" "$1"; }
say() { printf 'install: %s\n' "$*"; }

if [[ -z $DESTDIR && $(id -u) -ne 0 ]]; then
  echo "install: run as root (or set DESTDIR=/some/dir to install into a throwaway root)" >&2
  exit 1
fi
if ! "$PYTHON" -c 'import sys, venv; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "install: $PYTHON is not Python 3.11+ with venv (Debian: apt-get install python3-venv)" >&2
  exit 1
fi

# 1. The user: systemd-sysusers creates it once and leaves it alone afterwards.
install -D -m 0644 "$SRC/deploy/systemd/$NAME.sysusers" "$(root /usr/lib/sysusers.d/$NAME.conf)"
mkdir -p "$(root /etc)"
if [[ -n $DESTDIR ]]; then
  systemd-sysusers --root="$DESTDIR" "$(root /usr/lib/sysusers.d/$NAME.conf)" >/dev/null
else
  systemd-sysusers "/usr/lib/sysusers.d/$NAME.conf" >/dev/null
fi
uid=$(awk -F: -v u="$NAME" '$1 == u {print $3}' "$(root /etc/passwd)")
gid=$(awk -F: -v u="$NAME" '$1 == u {print $4}' "$(root /etc/passwd)")
say "user $NAME (uid $uid)"
own() {  # chown to the service user; as non-root into a DESTDIR this is skipped
  if [[ $(id -u) -eq 0 ]]; then chown "$uid:$gid" "$@"; fi
}

# 2. Folders.
install -d -m 0755 "$(root $CONF)" "$(root $PREFIX)"
install -d -m 0750 "$(root $DATA)"
own "$(root $DATA)"

# 3. The package, from a clean copy of this checkout (so builds never touch the checkout).
rm -rf "$(root $PREFIX/src)"
mkdir -p "$(root $PREFIX/src)"
cp -R "$SRC/pyproject.toml" "$SRC/README.md" "$SRC/.env.example" "$SRC/gateway" "$SRC/agents" \
  "$SRC/adapters" "$SRC/cypher" "$SRC/deploy" "$(root $PREFIX/src)/"
find "$(root $PREFIX/src)" -name __pycache__ -prune -exec rm -rf {} +
if [[ ! -x $(root $PREFIX/venv/bin/python) ]]; then
  "$PYTHON" -m venv "${VENV_ARGS[@]}" "$(root $PREFIX/venv)"
  say "venv $PREFIX/venv created"
fi
"$(root $PREFIX/venv/bin/python)" -m pip install -q --disable-pip-version-check --upgrade \
  "${PIP_ARGS[@]}" "$(root $PREFIX/src)"
say "package installed: $("$(root $PREFIX/venv/bin/python)" -m pip show blast-radius | awk '/^Version/ {print $2}')"

# 4. Units.
for unit in "$SRC"/deploy/systemd/*.service; do
  install -D -m 0644 "$unit" "$(root $UNITS)/$(basename "$unit")"
done
say "units in $UNITS: $(cd "$SRC/deploy/systemd" && echo ./*.service | sed 's|\./||g')"

# 5. The env file: created once from .env.example with the values of this layout.
env_file=$(root $CONF/env)
if [[ ! -e $env_file ]]; then
  tmp=$(mktemp)
  sed -e "s|^BLAST_DATA_DIR=.*|BLAST_DATA_DIR=$DATA|" \
    -e "s|^FALKORDB_URL=.*|FALKORDB_URL=redis://127.0.0.1:$FALKORDB_PORT|" \
    -e "s|^BLAST_WORKERS=.*|BLAST_WORKERS=0|" \
    -e "s|^BLAST_LOG_FORMAT=.*|BLAST_LOG_FORMAT=json|" \
    -e "s|^PROMETHEUS_MULTIPROC_DIR=.*|PROMETHEUS_MULTIPROC_DIR=$DATA/metrics|" \
    "$SRC/.env.example" >"$tmp"
  install -m 0600 "$tmp" "$env_file"
  rm -f "$tmp"
  say "env file $CONF/env written from .env.example (edit it: tokens)"
else
  chmod 0600 "$env_file"
  missing=$(grep -oE '^[A-Z][A-Z0-9_]+=' "$SRC/.env.example" | while read -r key; do
    grep -q "^$key" "$env_file" || printf '%s ' "${key%=}"
  done)
  say "env file $CONF/env kept${missing:+; settings new in this version (defaults apply): $missing}"
fi
own "$env_file"
# Commands run by hand in the data folder as the service user read the same settings (./.env).
ln -sfn "$CONF/env" "$(root $DATA/.env)"

# 6. Tell systemd (only on this machine, and only when systemd runs it).
if [[ -z $DESTDIR && -d /run/systemd/system ]]; then
  systemctl daemon-reload
fi

cat <<EOF

Next steps:
  1. Edit $CONF/env: BLAST_WEBHOOK_TOKENS=<tenant>=<token> (make one: openssl rand -hex 32),
     and the Slack and GitHub settings if you use them. Placeholders are refused.
  2. Start:  systemctl enable --now $NAME-falkordb $NAME $NAME-worker@investigator $NAME-worker@responder $NAME-worker@learner
  3. Load your world (commands run in $DATA read $CONF/env through $DATA/.env):
       cd $DATA && sudo -u $NAME $PREFIX/venv/bin/$NAME topology import /path/to/world.yaml
  4. Check:  cd $DATA && sudo -u $NAME $PREFIX/venv/bin/$NAME doctor
  5. TLS proxy, Alertmanager, Grafana, Slack, GitHub, backups: $PREFIX/src/deploy/README.md
EOF
