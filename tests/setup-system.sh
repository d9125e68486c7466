#!/usr/bin/env bash
# System packages the test suite needs: Debian's chromium (browser tests, driven by Playwright),
# a CJK font (so names in Han characters are drawn and measured as glyphs, not boxes) and
# virtuoso-opensource (the remote SPARQL store's integration tests). Idempotent.
set -euo pipefail
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v virtuoso-t >/dev/null 2>&1 || need+=(virtuoso-opensource)
[ -e /usr/share/fonts/truetype/wqy/wqy-microhei.ttc ] || need+=(fonts-wqy-microhei)
if [ ${#need[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need[@]}" >/dev/null
fi
