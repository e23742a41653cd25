#!/usr/bin/env bash
# Installs and starts the real services the tests talk to, when they are missing. Idempotent.
# Nothing is needed yet for the process runtime and the proxy; the container runtime and the
# registry service add Docker Engine and PostgreSQL here.
set -euo pipefail
# --- PostgreSQL for the registry service tests (thv-registry-api) -------------------------------
# Installs PostgreSQL when missing (as root), starts the cluster when it is down, and creates the test
# role `thv_test` (password `thv_test`, CREATEDB: each test file makes its own database) and the
# database `thv_registry_test`. Tests read THV_TEST_PG_URL, defaulting to that role on 127.0.0.1:5432.
ensure_postgres() {
  if ! command -v pg_ctlcluster >/dev/null 2>&1; then
    if [ "$(id -u)" -ne 0 ]; then echo "PostgreSQL is missing and installing it needs root" >&2; return 1; fi
    echo "== installing PostgreSQL"
    DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql >/dev/null \
      || { apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql >/dev/null; }
  fi
  local ver
  ver=$(pg_lsclusters -h | awk 'NR==1{print $1}')
  [ -n "$ver" ] || { echo "no PostgreSQL cluster found" >&2; return 1; }
  if ! pg_lsclusters -h | awk -v v="$ver" '$1==v && $2=="main"{print $4}' | grep -q online; then
    echo "== starting PostgreSQL $ver"
    pg_ctlcluster "$ver" main start
  fi
  local i
  for i in $(seq 1 50); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 0.2; done
  su postgres -c "psql -q -v ON_ERROR_STOP=1" <<'SQL'
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'thv_test') THEN
    CREATE ROLE thv_test LOGIN PASSWORD 'thv_test' CREATEDB;
  END IF;
END $$;
SELECT 'CREATE DATABASE thv_registry_test OWNER thv_test'
  WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'thv_registry_test')\gexec
SQL
}
ensure_postgres
# --- end PostgreSQL -----------------------------------------------------------------------------

# --- Docker Engine for the container runtime tests ---------------------------------------------
# Installs docker.io when missing (as root), starts dockerd when the socket does not answer (no systemd
# here: dockerd runs in the background, its log in .tmp/dockerd.log), and waits for `docker info`.
ensure_docker() {
  if ! command -v dockerd >/dev/null 2>&1; then
    if [ "$(id -u)" -ne 0 ]; then echo "Docker Engine is missing and installing it needs root" >&2; return 1; fi
    echo "== installing Docker Engine (docker.io)"
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y docker.io >/dev/null \
      || { apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y docker.io >/dev/null; }
  fi
  # A static busybox gives the locally built test images a shell (no registry is reachable for base images).
  if [ ! -x /bin/busybox ] && [ "$(id -u)" -eq 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y busybox-static >/dev/null || true
  fi
  if docker info >/dev/null 2>&1; then return 0; fi
  if [ "$(id -u)" -ne 0 ]; then echo "Docker Engine is not running and starting it needs root" >&2; return 1; fi
  echo "== starting Docker Engine"
  local log
  log="$(cd "$(dirname "$0")/.." && pwd)/.tmp/dockerd.log"
  mkdir -p "$(dirname "$log")"
  nohup dockerd >"$log" 2>&1 </dev/null &
  local i
  for i in $(seq 1 150); do docker info >/dev/null 2>&1 && return 0; sleep 0.2; done
  echo "dockerd did not answer within 30 s; see $log" >&2
  tail -20 "$log" >&2
  return 1
}
ensure_docker
# --- end Docker Engine --------------------------------------------------------------------------

# --- Prometheus for the observability tests (test/telemetry) -----------------------------------
# Only the binary is needed: each test starts its own `prometheus` with a temp config and data dir
# on a free port. Installs Debian's package when missing (as root); the service it ships is not started.
ensure_prometheus() {
  if command -v prometheus >/dev/null 2>&1; then return 0; fi
  if [ "$(id -u)" -ne 0 ]; then echo "Prometheus is missing and installing it needs root" >&2; return 1; fi
  echo "== installing Prometheus"
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends prometheus >/dev/null \
    || { apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends prometheus >/dev/null; }
}
ensure_prometheus
# --- end Prometheus -----------------------------------------------------------------------------

# --- openssl for the auth tests (test/helpers/oidc-provider.ts makes a test CA at runtime) -------
ensure_openssl() {
  if command -v openssl >/dev/null 2>&1; then return 0; fi
  if [ "$(id -u)" -ne 0 ]; then echo "openssl is missing and installing it needs root" >&2; return 1; fi
  echo "== installing openssl"
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y openssl >/dev/null \
    || { apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y openssl >/dev/null; }
}
ensure_openssl
# --- end openssl --------------------------------------------------------------------------------

exit 0
