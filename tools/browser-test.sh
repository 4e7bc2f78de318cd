#!/usr/bin/env bash
# The scoreboard's real-browser test, with what it needs: Debian's Chromium and the two npm packages
# (playwright-core, axe-core) pinned in tests/browser/package-lock.json. No browser download.
#   tools/browser-test.sh              run the test
#   tools/browser-test.sh --screenshots   also write docs/scoreboard-{phone,desktop}-{dark,light}.png
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x /usr/bin/chromium ] || ! dpkg -s fonts-dejavu-core >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
fi
command -v node >/dev/null || { echo "node (20 or newer) is needed: it comes with this machine's image" >&2; exit 1; }
npm ci --prefix tests/browser --no-audit --no-fund --loglevel=error

if [ "${1:-}" = "--screenshots" ]; then
    export SCOREBOARD_SCREENSHOTS=docs
fi
CI=${CI:-required} .venv/bin/python -m pytest -q -p no:cacheprovider tests/browser "${@:2}"

# Keep the README's pictures small: 64 colours are plenty for text on flat colours (needs pillow,
# from the 'tools' extra; without it the full-colour PNGs stay).
if [ -n "${SCOREBOARD_SCREENSHOTS:-}" ] && .venv/bin/python -c "import PIL" 2>/dev/null; then
    .venv/bin/python - <<'PY'
from pathlib import Path
from PIL import Image
for path in sorted(Path("docs").glob("scoreboard-*.png")):
    image = Image.open(path).convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    image.save(path, optimize=True)
    print(f"{path}: {path.stat().st_size // 1024} KiB")
PY
fi
