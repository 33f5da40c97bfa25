#!/usr/bin/env bash
# Installs abvm's build and run dependencies from Debian packages (--tests: the tests' too).
# Idempotent: quiet when everything is present. Needs root only when something is missing.
set -euo pipefail

# What building and running abvm needs, for every shipped experiment (the Debian cloud kernel,
# kernels built from Debian's linux-source-6.1, dd and fio in the guest): the main job's set.
packages=(
  build-essential cmake ninja-build pkg-config ccache
  nlohmann-json3-dev libtomlplusplus-dev libcli11-dev libfmt-dev
  libpugixml-dev libboost-math-dev
  python3-matplotlib
  qemu-system-x86 libvirt-dev libvirt-daemon-driver-qemu libvirt-clients
  busybox-static cpio kmod coreutils zstd xz-utils
  dpkg-dev libaio-dev zlib1g-dev
  linux-source-6.1 bc bison flex libelf-dev libssl-dev patch file
  e2fsprogs util-linux
)
# --tests adds what the tests, benchmarks and CI need: GoogleTest and Google Benchmark, the
# independent references (SciPy, jsonschema: also the KCIDB export's validator, xmllint), the report
# in Chromium, YAML (no script needs it since the rehearsal runs abvm nightly), clang for the fuzzers,
# fio on the host, strace (the agent's window traced: guest_agent_steps_test), and the tests' own
# libvirt daemons:
# libvirt-daemon (libvirtd, for `--connect qemu:///system` and the test daemons; it brings the
# storage driver with the dir backend, abvm's pool on a remote host, and virt-ssh-helper, which a
# qemu+ssh:// client runs on the remote side) and openssh-server/-client (one test daemon is
# reached as qemu+ssh://root@127.0.0.1 through an sshd of the test's own on the loopback address,
# libvirt_daemons.hpp; installing the package starts no sshd where policy-rc.d forbids it), and
# openssl, which makes the certificates of the test daemon reached as qemu+tls://.
test_packages=(
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-scipy python3-jsonschema libxml2-utils python3-yaml chromium
  libvirt-daemon openssh-server openssh-client openssl fio strace
  clang-14 libclang-rt-14-dev
)
usage() { echo "usage: $0 [--tests] [--print]" >&2; exit 2; }
tests=0
print=0
for arg in "$@"; do
  case "$arg" in
    --tests) tests=1 ;;
    --print) print=1 ;;
    *) usage ;;
  esac
done
[ $tests = 1 ] && packages+=("${test_packages[@]}")
if [ $print = 1 ]; then printf '%s\n' "${packages[@]}"; exit 0; fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
# The guest image builds a static fio from Debian's source package: deb-src must be enabled.
here=$(cd "$(dirname "$0")" && pwd)
need_deb_src=0
[ -e /etc/apt/sources.list.d/abvm-deb-src.sources ] || need_deb_src=1
# Debian's libvirt looks up the system user and group libvirt-qemu even for the embedded driver
# with QEMU as root; libvirt-daemon-system would create them, abvm needs no daemon: create them here
# (the same accounts, so installing libvirt-daemon-system later keeps them).
need_account=0
getent group libvirt-qemu >/dev/null && getent passwd libvirt-qemu >/dev/null || need_account=1
[ ${#missing[@]} -eq 0 ] && [ $need_deb_src -eq 0 ] && [ $need_account -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  [ ${#missing[@]} -gt 0 ] && echo "setup.sh: missing Debian packages: ${missing[*]}" >&2
  [ $need_deb_src -eq 1 ] && echo "setup.sh: Debian source packages (deb-src) are not enabled" >&2
  [ $need_account -eq 1 ] && echo "setup.sh: the system user and group libvirt-qemu do not exist" >&2
  echo "setup.sh: run it as root (sudo $0)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup.sh: installing ${#missing[@]} package(s): ${missing[*]}" >&2
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ $need_deb_src -eq 1 ]; then
  echo "setup.sh: enabling deb-src for the guest image's static fio" >&2
  "$here/../guests/enable-deb-src.sh" >/dev/null
fi
if [ $need_account -eq 1 ]; then
  echo "setup.sh: creating the system user and group libvirt-qemu (libvirt's QEMU driver needs them)" >&2
  getent group libvirt-qemu >/dev/null || groupadd --system libvirt-qemu
  getent passwd libvirt-qemu >/dev/null ||
    useradd --system --gid libvirt-qemu --home-dir /var/lib/libvirt --no-create-home \
      --shell /usr/sbin/nologin --comment "Libvirt Qemu" libvirt-qemu
fi
