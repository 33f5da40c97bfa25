#!/usr/bin/env bash
# Installs abvm's build and run dependencies from Debian packages.
# Idempotent: quiet when everything is present. Needs root only when something is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config ccache
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libtomlplusplus-dev libcli11-dev libfmt-dev libspdlog-dev
  libpugixml-dev libboost-math-dev
  python3-scipy python3-matplotlib python3-jsonschema chromium
  qemu-system-x86 libvirt-dev libvirt-daemon-driver-qemu libvirt-clients
  fio busybox-static cpio kmod coreutils zstd xz-utils
  dpkg-dev
  linux-source-6.1 bc bison flex libelf-dev libssl-dev patch file
  libaio-dev zlib1g-dev
)
case "${1:-}" in
  --print) printf '%s\n' "${packages[@]}"; exit 0 ;;
  "") ;;
  *) echo "usage: $0 [--print]" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "setup.sh: missing Debian packages: ${missing[*]}" >&2
  echo "setup.sh: run as root (sudo ./setup.sh) or install them with: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "setup.sh: installing ${#missing[@]} package(s): ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
