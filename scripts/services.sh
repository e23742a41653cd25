#!/usr/bin/env bash
# Installs and starts the real services the tests talk to, when they are missing. Idempotent.
# Nothing is needed yet for the process runtime and the proxy; the container runtime and the
# registry service add Docker Engine and PostgreSQL here.
set -euo pipefail
exit 0
