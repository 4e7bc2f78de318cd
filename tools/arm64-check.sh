#!/usr/bin/env bash
# The arm64 check: install lcr-pi and run its tests in an arm64 Debian bookworm (what Raspberry Pi OS
# is built on), emulated with qemu-user on an x86-64 machine. See README.md, "The arm64 check".
#
#   sudo tools/arm64-check.sh                    # build the root (once), install, run the whole suite
#   sudo tools/arm64-check.sh -- tests/test_settings.py -x   # pytest arguments after "--"
#
# Options (environment variables):
#   ARM64_ROOT     where the arm64 root lives (default /var/tmp/lcr-pi-arm64; reused when it exists)
#   ARM64_MIRROR   Debian mirror (default: the first deb.debian.org-style URI in /etc/apt/sources.list*)
#   ARM64_SUITE    Debian suite (default bookworm)
#   ARM64_SOURCE   "worktree" (default: the files as they are now, minus .venv/.git) or "HEAD" (git archive)
#
# Needs root (debootstrap, chroot, mounts) and a kernel with binfmt_misc. Takes long: the first run
# downloads and unpacks ~150 MB of arm64 packages and every arm64 instruction is emulated. Run it with
# `nice -n 10` on a shared machine. Exit status: pytest's (0 = every test passed).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
root=${ARM64_ROOT:-/var/tmp/lcr-pi-arm64}
suite=${ARM64_SUITE:-bookworm}
source_mode=${ARM64_SOURCE:-worktree}
pytest_args=()
if [ "${1:-}" = "--" ]; then shift; pytest_args=("$@"); elif [ $# -gt 0 ]; then
    echo "usage: $0 [-- PYTEST-ARGS...]" >&2; exit 2
fi

log() { printf '[arm64-check %(%H:%M:%S)T] %s\n' -1 "$*"; }

if [ "$(id -u)" -ne 0 ]; then
    echo "arm64-check: run as root (debootstrap and chroot need it): sudo $0" >&2
    exit 2
fi

# 1. The host tools: qemu-user-static (the arm64 CPU), binfmt-support (runs arm64 programs through it).
missing=()
for tool in qemu-aarch64-static:qemu-user-static debootstrap:debootstrap update-binfmts:binfmt-support; do
    command -v "${tool%%:*}" >/dev/null || missing+=("${tool##*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
"$here/arm64/binfmt.sh"

# 2. The arm64 root, made once and reused.
mirror=${ARM64_MIRROR:-$("$here/arm64/mirror.sh")}
if [ ! -x "$root/usr/bin/python3" ] || [ ! -e "$root/.lcr-pi-root-complete" ]; then
    log "building an arm64 Debian $suite root in $root from $mirror"
    rm -rf "$root"
    mkdir -p "$root"
    start=$SECONDS
    debootstrap --arch=arm64 --foreign --variant=minbase \
        --include=python3,python3-venv,python3-numpy,espeak-ng,alsa-utils,libgl1,libglib2.0-0,ca-certificates,git \
        "$suite" "$root" "$mirror"
    # With the binfmt "F" flag the kernel already holds the emulator; copying it in also covers kernels
    # without that flag.
    cp /usr/bin/qemu-aarch64-static "$root/usr/bin/"
    chroot "$root" /debootstrap/debootstrap --second-stage
    touch "$root/.lcr-pi-root-complete"
    log "root built in $((SECONDS - start)) s"
fi
log "the root says: $(chroot "$root" uname -m), $(chroot "$root" python3 --version)"

# 3. Mounts for the chroot, removed on the way out.
mounted=()
cleanup() {
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
for fs in proc sys dev dev/pts; do
    mkdir -p "$root/$fs"
    if ! mountpoint -q "$root/$fs"; then
        case $fs in
            proc) mount -t proc proc "$root/proc" ;;
            sys) mount -t sysfs sys "$root/sys" ;;
            *) mount --bind "/$fs" "$root/$fs" ;;
        esac
        mounted+=("$root/$fs")
    fi
done
cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
# pip inside the root trusts the host's CA bundle (which may hold a proxy's certificate) and uses its proxy
# settings, if any; nothing else of the host's environment gets in (its pip options name host paths).
cp -L /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/host-ca-certificates.crt"
bundle=/etc/ssl/certs/host-ca-certificates.crt
root_env=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
          PIP_CERT=$bundle REQUESTS_CA_BUNDLE=$bundle SSL_CERT_FILE=$bundle PIP_DISABLE_PIP_VERSION_CHECK=1
          PIP_DEFAULT_TIMEOUT=180)
for var in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY PIP_INDEX_URL; do
    [ -n "${!var:-}" ] && root_env+=("$var=${!var}")
done
in_root() { chroot "$root" env -i "${root_env[@]}" "$@"; }

# 4. The repository, copied in (never the host's venv: its binaries are x86-64).
src="$root/opt/lcr-pi/src"
log "copying the repository ($source_mode) to /opt/lcr-pi/src"
rm -rf "$src"
mkdir -p "$src"
if [ "$source_mode" = "HEAD" ]; then
    git -C "$repo" archive --format=tar HEAD | tar -x -C "$src"
else
    tar -C "$repo" --exclude=./.venv --exclude=./.git --exclude='*/__pycache__' --exclude=./.hypothesis \
        --exclude='*.egg-info' --exclude=./out --exclude=./build -cf - . | tar -x -C "$src"
fi

# 5. The install, as README.md tells a person to do it on the Pi.
venv=/opt/lcr-pi/venv
start=$SECONDS
if [ ! -x "$root$venv/bin/python" ]; then
    log "making the venv (--system-site-packages)"
    in_root python3 -m venv --system-site-packages "$venv"
fi
log "pip install -e '.[test]'"
in_root "$venv/bin/pip" install -q -e "/opt/lcr-pi/src[test]"
log "installed in $((SECONDS - start)) s"
in_root "$venv/bin/python" - <<'PY'
import platform
from importlib.metadata import version
import cv2, numpy
print(f"[arm64-check] python {platform.python_version()} on {platform.machine()}; numpy {numpy.__version__}, "
      f"opencv {cv2.__version__}, gpiozero {version('gpiozero')}")
PY
in_root "$venv/bin/lcr-pi" --version

# 6. The tests.
log "running pytest ${pytest_args[*]:-(the whole suite)}"
start=$SECONDS
set +e
in_root PYTHONDONTWRITEBYTECODE=1 \
    sh -c 'cd /opt/lcr-pi/src && exec "$0" -m pytest -q -p no:cacheprovider "$@"' "$venv/bin/python" "${pytest_args[@]}"
status=$?
set -e
log "pytest finished with status $status in $((SECONDS - start)) s"
exit $status
