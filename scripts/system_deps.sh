#!/usr/bin/env bash
# Debian packages memgym needs: libusb-1.0-0 (open3d-cpu imports it at run time); chromium and
# chromium-driver (the tests drive 'memgym view' pages in headless Chromium).
# Installs them when missing and we are root (or have passwordless sudo); otherwise says what to do.
set -u
missing=()
ldconfig -p 2>/dev/null | grep -q 'libusb-1.0.so.0' || missing+=(libusb-1.0-0)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ]; then run=(); elif sudo -n true 2>/dev/null; then run=(sudo -n); else
  echo "memgym: please install the Debian packages: ${missing[*]} (libusb for open3d, chromium for the viewer tests)" >&2; exit 0
fi
export DEBIAN_FRONTEND=noninteractive
"${run[@]}" apt-get install -y -q "${missing[@]}" >/dev/null 2>&1 || {
  "${run[@]}" apt-get update -q >/dev/null 2>&1 && "${run[@]}" apt-get install -y -q "${missing[@]}" >/dev/null
}
