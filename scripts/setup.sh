#!/usr/bin/env bash
# setup.sh - installs what bspkit needs to build and test, if it is missing (Debian).
# Idempotent and quiet when everything is there. Needs root (or sudo) only to install.
set -euo pipefail

need_packages=()
have() { command -v "$1" >/dev/null 2>&1; }
have cc || need_packages+=(build-essential)
have cmake || need_packages+=(cmake)
have ninja || need_packages+=(ninja-build)
have pkg-config || need_packages+=(pkg-config)
have timeout || need_packages+=(coreutils)
# The sanitizer runtimes come with gcc on Debian (libasan, libubsan, libtsan).

if ((${#need_packages[@]})); then
  echo "setup: installing ${need_packages[*]}" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    have sudo || { echo "setup: need root (or sudo) to install: ${need_packages[*]}" >&2; exit 1; }
    SUDO=sudo
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${need_packages[@]}"
fi
