#!/usr/bin/env bash
# Print the Debian mirror apt already uses (deb822 .sources or one-line .list), else deb.debian.org.
set -euo pipefail
uri=$(grep -hE '^\s*URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' | grep -v -- '-security' | head -n 1 || true)
if [ -z "$uri" ]; then
    uri=$(grep -hE '^\s*deb\s' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
        | awk '{for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) {print $i; exit}}' | grep -v -- '-security' | head -n 1 || true)
fi
echo "${uri:-http://deb.debian.org/debian}"
