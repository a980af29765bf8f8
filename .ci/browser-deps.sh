#!/bin/sh
# Installs Debian's Chromium for test/report/browser.test.ts (driven by playwright-core through
# executablePath; playwright's own browser download is never used). Idempotent and quiet: does nothing
# when /usr/bin/chromium exists. Needs root (CI containers run as root).
set -eu
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core fonts-liberation >/dev/null
test -x /usr/bin/chromium || { echo "browser-deps: /usr/bin/chromium still missing after apt-get install chromium" >&2; exit 1; }
