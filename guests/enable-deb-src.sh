#!/usr/bin/env bash
# Enables Debian source packages (deb-src) for the host's own mirror and suites, so that
# `apt-get source fio` works for the guest image's static fio. Idempotent; needs root.
set -euo pipefail
target=/etc/apt/sources.list.d/abvm-deb-src.sources
if [ -e "$target" ]; then exit 0; fi
if [ "$(id -u)" -ne 0 ]; then
  echo "enable-deb-src.sh: run as root to write $target" >&2
  exit 1
fi
main=/etc/apt/sources.list.d/debian.sources
if [ ! -r "$main" ]; then
  echo "enable-deb-src.sh: $main not found; add a deb-src line for your mirror by hand" >&2
  exit 1
fi
# Copy the deb stanzas of the main Debian mirror (not -security: fio has no security sources
# there we need), changing only the type.
awk 'BEGIN{RS="";ORS="\n\n"} /URIs:[ \t]*[^ \t\n]*\/debian\/?(\n|$)/ {sub(/Types: deb/,"Types: deb-src"); print}' "$main" > "$target"
if [ ! -s "$target" ]; then
  rm -f "$target"
  echo "enable-deb-src.sh: no Debian mirror stanza found in $main" >&2
  exit 1
fi
apt-get update -qq
