#!/bin/sh
# Installs what the live-plane tests need outside npm: the Debian `prometheus` binary (test/live/prometheus.test.ts
# starts it to scrape the gateway). Idempotent and quiet: does nothing when `prometheus` is already on PATH.
set -eu
if command -v prometheus >/dev/null 2>&1; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends prometheus >/dev/null
# The package's service (if any init system started it) is not what the tests use; they start their own.
command -v prometheus >/dev/null 2>&1 || { echo "live-deps: prometheus still not on PATH after install" >&2; exit 1; }
