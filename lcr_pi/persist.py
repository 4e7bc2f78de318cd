"""Nothing lost: the game written atomically after every turn, a JSON-lines log, and evidence frames.

A yanked plug can interrupt any write. The state file is therefore replaced atomically (write a
temporary file in the same folder, flush it to disk, rename it over the old one, flush the folder), so
after a power cut the file is either the previous turn's or this turn's, never half of each. The log is
append-only, one JSON object per line, flushed per line; a torn last line is skipped when read. It is
rotated by renames only (see :meth:`GameStore.log`), so that a card is not filled by it over the months
and a power cut during a rotation leaves every line that is kept in a whole file.
"""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
from pathlib import Path

from lcr_pi.errors import UserError

logger = logging.getLogger("lcr_pi.persist")

#: The game log is rotated when a line would take it past this size: about four nights (a long night
#: of 12 players logs about 0.5 MB).
LOG_MAX_BYTES = 2 * 1024 * 1024
#: Rotated logs kept besides the current one (``game-log.1.jsonl`` the newest): at most 10 MB in all,
#: about twenty nights.
LOG_KEEP = 4


def write_atomic(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` so that a crash leaves either the old or the new content.

    The file is private to its owner (0600, as mkstemp makes it) unless ``mode`` says otherwise."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    _fsync_dir(path.parent)


def check_writable(path: str | Path, what: str) -> Path:
    """Check that a file can be written at ``path`` (its folder made if need be) before the work that
    produces it; a :class:`UserError` names the path and the problem.

    >>> import tempfile; folder = Path(tempfile.mkdtemp())
    >>> check_writable(folder / "a" / "t.json", "the calibration").name
    't.json'
    >>> check_writable(folder, "the calibration")
    Traceback (most recent call last):
    ...
    lcr_pi.errors.UserError: cannot save the calibration to ... : it is a folder; give a file name
    """
    path = Path(path).expanduser()
    if path.is_dir():
        raise UserError(f"cannot save {what} to {path} : it is a folder; give a file name")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".probe", dir=path.parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise UserError(f"cannot save {what} to {path} ({exc.strerror or exc})") from None
    return path


def remove_stale_temporaries(folder: Path, name: str = "*") -> int:
    """Remove what :func:`write_atomic` leaves of ``name`` in ``folder`` when the power is cut (or the
    program killed) mid-write: its temporary ``.NAME.*.tmp`` files, which nothing else would ever
    remove (a card filling up over months of yanked plugs). Returns how many were removed; a folder
    that cannot be changed (read-only) is left as it is.

    >>> import tempfile; folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / ".game.json.k2x9.tmp").write_bytes(b"half"), (folder / "game.json").write_bytes(b"{}")
    >>> remove_stale_temporaries(folder, "game.json"), sorted(p.name for p in folder.iterdir())
    (1, ['game.json'])
    """
    removed = 0
    try:
        for stale in Path(folder).glob(f".{name}.*.tmp"):
            try:
                stale.unlink()
                removed += 1
            except OSError:
                pass
    except OSError:
        pass
    return removed


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems cannot sync a folder; the rename is still atomic
    finally:
        os.close(fd)


class GameStore:
    """The files of one table under ``state_dir``: ``game.json``, ``game-log.jsonl``, ``evidence/``."""

    def __init__(self, state_dir: str | Path, *, evidence_frames: int = 200, log_max_bytes: int = LOG_MAX_BYTES,
                 log_keep: int = LOG_KEEP):
        self.dir = Path(state_dir).expanduser()
        self.state_path = self.dir / "game.json"
        self.log_path = self.dir / "game-log.jsonl"
        self.evidence_dir = self.dir / "evidence"
        self.evidence_frames = evidence_frames
        self.log_max_bytes = log_max_bytes
        self.log_keep = log_keep
        self._rotation_failed = False
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(f"cannot create the state folder {self.dir} ({exc.strerror})") from None
        # Only this table's process writes these files: what a power cut left mid-write goes now.
        remove_stale_temporaries(self.dir, self.state_path.name)
        remove_stale_temporaries(self.evidence_dir, "*.jpg")

    # -- the saved game ---------------------------------------------------------------------------

    def save(self, snapshot: dict) -> None:
        """Write the whole table snapshot (game, series, settings) atomically."""
        text = json.dumps(snapshot, sort_keys=True, separators=(",", ":"))
        try:
            write_atomic(self.state_path, text.encode("utf-8"))
        except OSError as exc:
            raise UserError(f"cannot save the game to {self.state_path} ({exc.strerror})") from None

    def load(self) -> dict | None:
        """The saved snapshot, or None when there is none. A damaged file is named, not loaded."""
        try:
            text = self.state_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except UnicodeDecodeError:
            raise UserError(f"the saved game {self.state_path} is damaged (it is not text)") from None
        except OSError as exc:
            raise UserError(f"cannot read the saved game {self.state_path} ({exc.strerror})") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UserError(f"the saved game {self.state_path} is damaged ({exc.msg})") from None
        if not isinstance(data, dict):
            raise UserError(f"the saved game {self.state_path} is damaged (it holds no table)")
        return data

    def discard(self) -> None:
        """Forget the saved game (a finished night); the log stays."""
        try:
            self.state_path.unlink()
        except FileNotFoundError:
            pass

    # -- the log -------------------------------------------------------------------------------

    def log(self, record: dict) -> None:
        """Append ``record`` as one line, on the card before this returns.

        A line that would take the log past ``log_max_bytes`` goes to a new file, the current one
        being rotated first (:meth:`_rotate_log`)."""
        line = (json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n").encode("utf-8")
        try:
            size = self.log_path.stat().st_size
        except FileNotFoundError:
            size = 0
        except OSError as exc:
            raise UserError(f"cannot write the game log {self.log_path} ({exc.strerror})") from None
        if size > 0 and size + len(line) > self.log_max_bytes and not self._rotation_failed:
            try:
                self._rotate_log()
                size = 0
            except OSError as exc:
                # The line is still kept, in the current file; the next start tries again.
                self._rotation_failed = True
                logger.error("cannot rotate the game log %s (%s); it grows until the next start",
                             self.log_path, exc.strerror or exc)
        try:
            with open(self.log_path, "a+b") as f:
                # A power cut can leave a torn last line; start on a fresh line so ours stays whole.
                if f.seek(0, os.SEEK_END) > 0:
                    f.seek(-1, os.SEEK_END)
                    if f.read(1) != b"\n":
                        line = b"\n" + line
                f.write(line)
                f.flush()
                os.fsync(f.fileno())
        except OSError as exc:
            raise UserError(f"cannot write the game log {self.log_path} ({exc.strerror})") from None
        if size == 0:
            _fsync_dir(self.dir)  # a new file: its name on the card too, not only its line

    def _old_log(self, n: int) -> Path:
        return self.dir / f"game-log.{n}.jsonl"

    def _rotate_log(self) -> None:
        """``game-log.jsonl`` becomes ``game-log.1.jsonl``, each older file moves one number up, and
        the one that would pass ``log_keep`` is dropped (replaced by the next one down).

        Only renames, each atomic and made durable before the next, oldest first: a power cut at any
        point leaves every line in a whole file, in files whose higher numbers are still the older
        ones, with at most the oldest file gone. A rotation cut short leaves a gap in the numbers;
        the next one moves the files only up to the first gap, so it completes the cut one without
        dropping another file."""
        if self.log_keep <= 0:
            self.log_path.unlink()
            _fsync_dir(self.dir)
            return
        gap = next((n for n in range(1, self.log_keep) if not self._old_log(n).exists()), self.log_keep)
        for n in range(gap, 1, -1):
            os.replace(self._old_log(n - 1), self._old_log(n))
            _fsync_dir(self.dir)
        os.replace(self.log_path, self._old_log(1))
        _fsync_dir(self.dir)
        for number, path in self._numbered_logs():
            if number > self.log_keep:  # kept by a larger log_keep before
                path.unlink(missing_ok=True)

    def _numbered_logs(self) -> list[tuple[int, Path]]:
        found = []
        for path in self.dir.glob("game-log.*.jsonl"):
            middle = path.name[len("game-log."):-len(".jsonl")]
            if middle.isascii() and middle.isdigit():
                found.append((int(middle), path))
        return sorted(found)

    def log_files(self) -> list[Path]:
        """The files of the log that exist, oldest first: the rotated ones from the highest number
        down, then ``game-log.jsonl``."""
        try:
            files = [path for _, path in reversed(self._numbered_logs())]
        except OSError:
            files = []
        return files + ([self.log_path] if self.log_path.exists() else [])

    def read_log(self) -> list[dict]:
        """Every complete line of the log, oldest first, across its rotated files (a line torn by a
        power cut is skipped)."""
        out = []
        for path in self.log_files():
            try:
                lines = path.read_text(encoding="utf-8").splitlines()
            except FileNotFoundError:
                continue  # rotated away while we looked
            for line in lines:
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
        return out

    # -- evidence --------------------------------------------------------------------------------

    def newest_evidence_number(self) -> int:
        """The highest number among the kept frames (``000123.jpg``), 0 when none: a new table goes on
        counting from there, so the ring drops the old night's frames first, not the new night's."""
        try:
            numbers = [int(p.stem) for p in self.evidence_dir.glob("*.jpg") if p.stem.isascii() and p.stem.isdigit()]
        except OSError:
            return 0
        return max(numbers, default=0)

    def keep_evidence(self, name: str, jpeg: bytes) -> Path | None:
        """Store one read roll's frame (with the reader's overlay) and drop the oldest beyond the ring."""
        if self.evidence_frames <= 0:
            return None
        path = self.evidence_dir / name
        try:
            self.evidence_dir.mkdir(parents=True, exist_ok=True)
            frames = sorted(self.evidence_dir.glob("*.jpg"), key=frame_order)
            for old in frames[: max(0, len(frames) - self.evidence_frames + 1)]:
                old.unlink(missing_ok=True)  # the oldest first: room for the new one on a full card
            write_atomic(path, jpeg)
        except OSError as exc:
            raise UserError(f"cannot keep the photo of the roll in {self.evidence_dir} ({exc.strerror or exc})") from None
        return path


def frame_order(path: Path) -> tuple:
    """Sort key of a frame file: its name with each run of digits taken as a number, so that
    frame2 comes before frame10, as a tool that numbers frames without leading zeros
    (``ffmpeg ... frame%d.png``) means them, and the evidence ring's 999999.jpg before 1000000.jpg.

    >>> sorted(["frame10.png", "frame2.png", "frame1.png"], key=lambda n: frame_order(Path(n)))
    ['frame1.png', 'frame2.png', 'frame10.png']
    """
    parts = re.split(r"(\d+)", path.name)  # text, number, text, ... (odd places: the numbers)
    return tuple((int(p), p) if i % 2 else (-1, p) for i, p in enumerate(parts))
