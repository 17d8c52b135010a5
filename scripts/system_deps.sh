#!/usr/bin/env bash
# Debian packages memgym's extras need at run time: libusb-1.0-0 (open3d-cpu imports it).
# Installs them when missing and we are root (or have passwordless sudo); otherwise says what to do.
set -u
missing=()
ldconfig -p 2>/dev/null | grep -q 'libusb-1.0.so.0' || missing+=(libusb-1.0-0)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ]; then run=(); elif sudo -n true 2>/dev/null; then run=(sudo -n); else
  echo "memgym: please install the Debian packages: ${missing[*]} (needed by open3d)" >&2; exit 0
fi
export DEBIAN_FRONTEND=noninteractive
"${run[@]}" apt-get install -y -q "${missing[@]}" >/dev/null 2>&1 || {
  "${run[@]}" apt-get update -q >/dev/null 2>&1 && "${run[@]}" apt-get install -y -q "${missing[@]}" >/dev/null
}
