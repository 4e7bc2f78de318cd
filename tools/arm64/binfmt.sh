#!/usr/bin/env bash
# Make sure this kernel runs arm64 (aarch64) programs through qemu-aarch64: binfmt_misc mounted and the
# qemu-aarch64 entry enabled. Exits non-zero with a plain message when that is impossible (for example a
# container without the privilege to mount binfmt_misc).
set -euo pipefail
binfmt=/proc/sys/fs/binfmt_misc
if [ ! -e "$binfmt/register" ]; then
    mount -t binfmt_misc binfmt_misc "$binfmt" 2>/dev/null || {
        echo "arm64-check: cannot mount binfmt_misc at $binfmt (no privilege?): arm64 programs cannot run here" >&2
        exit 3
    }
fi
if [ ! -e "$binfmt/qemu-aarch64" ]; then
    update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || update-binfmts --import qemu-aarch64 >/dev/null 2>&1 || true
fi
if ! grep -q '^enabled' "$binfmt/qemu-aarch64" 2>/dev/null; then
    echo "arm64-check: the qemu-aarch64 binfmt entry is not enabled (see: update-binfmts --display qemu-aarch64)" >&2
    exit 3
fi
