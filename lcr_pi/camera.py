"""Frame sources at the edge: the Pi camera, a USB webcam or video file (OpenCV), a folder of frames.

Each source has ``read() -> np.ndarray | None`` (a BGR frame, or None when none came) and ``close()``,
and ``frame_time``: the capture time (s, on the source's own clock) of the frame ``read`` gave last, or
None when the source cannot tell (a folder of frames, frames in memory). The settle detector's waits
follow it, so they last as long at any frame rate (:mod:`lcr_pi.vision.settle`, *Time*).
picamera2 exists only on a Pi, so it is imported lazily inside :class:`PiCameraSource`.
:class:`ReopeningSource` wraps any live source: when frames stop coming it reopens the camera, with a
growing pause, and tells the table while the camera is away. :class:`LiveCapture` reads a live camera
on a thread of its own, so that a camera that stops mid-frame cannot freeze the table.
"""

from __future__ import annotations

from contextlib import contextmanager

import logging
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import cv2

from lcr_pi.errors import UserError
from lcr_pi.persist import frame_order

log = logging.getLogger("lcr_pi.camera")

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp"}


class PiCameraSource:
    """The Raspberry Pi camera through picamera2 (from apt: python3-picamera2).

    Format "RGB888" is, despite its name, stored B, G, R per pixel: exactly what OpenCV expects.
    ``controls`` (e.g. locked exposure and white balance from the calibration) are applied at start.
    ``frame_time`` is the sensor's timestamp of the frame (its metadata's SensorTimestamp, ns), taken
    with the frame from the same request.
    """

    frame_time: float | None = None

    def __init__(self, width: int = 1280, height: int = 960, controls: dict | None = None):
        try:
            from picamera2 import Picamera2  # noqa: PLC0415 - only present on a Raspberry Pi
        except ImportError:
            raise UserError(
                "picamera2 is not installed: on Raspberry Pi OS run 'sudo apt install python3-picamera2' "
                "and make the venv with --system-site-packages"
            ) from None
        except ValueError as exc:
            # opencv-python 5 needs numpy 2, which pip puts in the venv; apt's python3-simplejpeg (which
            # picamera2 imports) is built for Bookworm's numpy 1.24 and refuses to load beside it
            # ("numpy.dtype size changed, may indicate binary incompatibility"). Found by an audit:
            # `lcr-pi run` and the doctor stopped with this traceback on a Pi set up as README says.
            if "binary incompatib" not in str(exc):
                raise
            raise UserError(
                f"picamera2 cannot load ({exc}): a library it uses was built for another numpy; run "
                f"'{sys.prefix}/bin/pip install --ignore-installed --no-deps simplejpeg' "
                "(README: Install on a Raspberry Pi, step 3)"
            ) from None
        try:
            self.camera = Picamera2()
        except (RuntimeError, IndexError, OSError) as exc:
            raise UserError(f"the Pi camera did not start ({exc}); is it connected and enabled?") from None
        try:
            config = self.camera.create_preview_configuration(main={"size": (width, height), "format": "RGB888"})
            self.camera.configure(config)
            if controls:
                self.camera.set_controls(controls)
            self.camera.start()
        except (RuntimeError, IndexError, OSError) as exc:
            # Picamera2() acquired the camera, and libcamera lets one holder have it: kept, every later
            # reopening failed too (found by an audit: the camera never came back without a restart).
            self._release()
            raise UserError(f"the Pi camera did not start ({exc}); is it connected and enabled?") from None
        # A camera that cannot give RGB888 (a USB webcam, which picamera2 opens too) gets its
        # configuration adjusted by libcamera, and picamera2 only logs it: the frames would then be YUYV
        # or MJPEG, not the B, G, R pictures the reader reads (found by an audit). OpenCV reads it right.
        given = ((getattr(self.camera, "camera_config", None) or {}).get("main") or {}).get("format")
        if given is not None and given != "RGB888":
            self._release()
            raise UserError(f"the camera picamera2 found gives its pictures as {given}, not RGB888: for a USB "
                            "webcam set source = \"webcam:0\" in [camera]")

    def _release(self) -> None:
        try:
            self.camera.close()
        except Exception:  # noqa: BLE001 - a camera that would not start may not close cleanly either
            pass

    def read(self):
        capture = getattr(self.camera, "capture_arrays", None)
        if capture is None:  # a picamera2 too old to give a frame with its metadata: when it came
            frame = self.camera.capture_array("main")
            self.frame_time = time.monotonic()
            return frame
        arrays, metadata = capture(["main"])
        stamp = metadata.get("SensorTimestamp") if isinstance(metadata, dict) else None
        self.frame_time = stamp / 1e9 if isinstance(stamp, (int, float)) and stamp > 0 else None
        return arrays[0]

    def set_exposure_value(self, stops: float) -> None:
        """Automatic exposure aims ``stops`` brighter (darker when negative): picamera2's ``ExposureValue``
        control, -8 to 8, applied only while the automatic exposure runs (``lcr-pi calibrate``)."""
        self.camera.set_controls({"ExposureValue": float(stops)})

    def close(self):
        self.camera.close()

    #: picamera2's close may be called while a capture waits (it stops the camera; a capture waiting
    #: for a frame that never comes is how a stalled camera is let go): :class:`LiveCapture` does so.
    closes_while_capturing = True


@contextmanager
def quiet_opencv():
    """OpenCV's own log lines off while a camera is opened: a webcam that is not there prints
    "[ERROR:0@0.4] global obsensor_uvc_stream_channel.cpp:163 ... Camera index out of range" before
    the message that says so in words (found 2026-12-04 in ``lcr-pi doctor``'s output on a laptop)."""
    level = cv2.utils.logging.getLogLevel()
    cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)
    try:
        yield
    finally:
        cv2.utils.logging.setLogLevel(level)


class OpenCVSource:
    """A USB webcam (``index``) or a video file (``path``) through OpenCV.

    ``frame_time``: for a webcam the time its frame came (``time.monotonic``), for a video file the
    frame's time in the recording, so that a night recorded at 60 fps plays as it was filmed."""

    frame_time: float | None = None

    def __init__(self, target: int | str, width: int | None = None, height: int | None = None, loop: bool = False):
        self.target = target
        self.loop = loop
        self.is_file = isinstance(target, str)
        if self.is_file and not Path(target).is_file():
            raise UserError(f"video file {target} does not exist")
        self.recording = self.is_file and not loop  # it ends; a webcam does not
        with quiet_opencv():
            self.capture = cv2.VideoCapture(target)
        if not self.capture.isOpened():
            what = f"video file {target}" if self.is_file else f"webcam {target}"
            raise UserError(f"cannot open {what}")
        if width and height and not self.is_file:
            self.capture.set(cv2.CAP_PROP_FRAME_WIDTH, width)
            self.capture.set(cv2.CAP_PROP_FRAME_HEIGHT, height)
        self.exhausted = False

    def read(self):
        ok, frame = self.capture.read()
        if not ok and self.is_file and self.loop:
            self.capture.set(cv2.CAP_PROP_POS_FRAMES, 0)
            ok, frame = self.capture.read()
        if ok:
            self.frame_time = self._time()
            return frame
        if self.is_file and not self.loop:
            self.exhausted = True
        return None

    def _time(self) -> float | None:
        if not self.is_file:
            return time.monotonic()
        ms = self.capture.get(cv2.CAP_PROP_POS_MSEC)
        return ms / 1000.0 if ms == ms and ms >= 0 else None  # ms == ms: not NaN

    def close(self):
        self.capture.release()


class FolderSource:
    """A folder of frames, read in name order, numbers by their value (a replay of a night, or a test).
    Files carry no capture time: the frames count as a 30 fps preview's."""

    frame_time = None

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise UserError(f"frame folder {folder} does not exist")
        self.paths = sorted((p for p in self.folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES), key=frame_order)
        if not self.paths:
            raise UserError(f"frame folder {folder} has no images ({', '.join(sorted(IMAGE_SUFFIXES))})")
        self.index = 0
        self.exhausted = False
        self.recording = True  # it ends

    def read(self):
        while self.index < len(self.paths):
            path = self.paths[self.index]
            self.index += 1
            frame = cv2.imread(str(path), cv2.IMREAD_COLOR)
            if frame is not None:
                return frame
            log.warning("skipping %s: not a readable image", path)
        self.exhausted = True
        return None

    def close(self):
        pass


class ListSource:
    """Frames from memory (the demo's rendered frames, tests); ``times`` (s), when given, are their
    capture times."""

    frame_time = None

    def __init__(self, frames, times=None):
        self.frames = list(frames)
        self.times = list(times) if times is not None else None
        if self.times is not None and len(self.times) != len(self.frames):
            raise ValueError(f"{len(self.times)} times for {len(self.frames)} frames")
        self.index = 0
        self.exhausted = not self.frames

    def extend(self, frames):
        if self.times is not None:
            raise ValueError("frames with times are extended with their times: not supported")
        self.frames.extend(frames)
        self.exhausted = False

    def read(self):
        if self.index >= len(self.frames):
            self.exhausted = True
            return None
        frame = self.frames[self.index]
        self.frame_time = self.times[self.index] if self.times is not None else None
        self.index += 1
        return frame

    def close(self):
        pass


class SizeWatch:
    """Passes a source's frames on, and calls ``on_size(width, height)`` with the first frame's size and
    with each new one (a camera may not give the size it was asked for; another may be plugged in)."""

    def __init__(self, frames, on_size: Callable[[int, int], None]):
        self.frames = frames
        self.on_size = on_size
        self.size: tuple[int, int] | None = None

    @property
    def exhausted(self) -> bool:
        return bool(getattr(self.frames, "exhausted", False))

    @property
    def frame_time(self) -> float | None:
        return getattr(self.frames, "frame_time", None)

    def read(self):
        frame = self.frames.read()
        shape = getattr(frame, "shape", ())
        if len(shape) >= 2 and (int(shape[1]), int(shape[0])) != self.size:
            self.size = (int(shape[1]), int(shape[0]))
            self.on_size(*self.size)
        return frame

    def close(self):
        self.frames.close()


class ReopeningSource:
    """Keeps a live camera alive: after ``patience`` empty reads it reopens it, backing off up to 30 s.

    ``on_lost`` and ``on_back`` tell the table (spoken) that the camera went away and came back. A
    recording (a video file or a folder of frames: ``recording`` true) that reaches its end is not
    reopened: the source is then ``exhausted``, as the recording is. (Reopened, it told the table
    "the camera has stopped ... the camera is back" every second, and played the night again.)

    A camera that was let go (stuck in a capture when closed, see :class:`LiveCapture`) often cannot be
    opened again in the same process: libcamera keeps it acquired while its close hangs. When
    ``give_up_after`` is given and no frame has come for that many seconds since a camera was let go,
    ``on_give_up(reason)`` is called, once: ``lcr-pi run`` then exits for systemd to restart it (a
    restart frees the camera), the game resuming as after a power cut.
    """

    def __init__(
        self,
        open_source: Callable[[], object],
        *,
        patience: int = 30,
        on_lost: Callable[[str], None] | None = None,
        on_back: Callable[[], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        give_up_after: float | None = None,
        on_give_up: Callable[[str], None] | None = None,
    ):
        self.open_source = open_source
        self.give_up_after, self.on_give_up = give_up_after, on_give_up
        self._let_go = None  # the camera last let go, until a frame comes
        self._let_go_at: float | None = None
        self.gave_up = False
        self.sleep = sleep
        self.patience = patience
        self.on_lost = on_lost
        self.on_back = on_back
        self.clock = clock
        self.source = None
        self.failures = 0
        self.lost = False
        self.retry_at = 0.0
        self.backoff = 1.0
        self.exhausted = False
        self._open()

    def _open(self) -> None:
        try:
            self.source = self.open_source()
        except UserError as exc:
            self.source = None
            self._mark_lost(str(exc))

    def _mark_lost(self, reason: str) -> None:
        self.retry_at = self.clock() + self.backoff
        self.backoff = min(self.backoff * 2, 30.0)
        if not self.lost:
            self.lost = True
            log.error("camera lost: %s", reason)
            if self.on_lost:
                self.on_lost(reason)

    def read(self):
        frame = self._read()
        if frame is not None:
            self._let_go = self._let_go_at = None  # a camera came back: nothing to give up on
        elif self._let_go_at is not None:
            self._maybe_give_up()
        return frame

    def _maybe_give_up(self) -> None:
        if self.gave_up or self.on_give_up is None or self.give_up_after is None:
            return
        waited = self.clock() - self._let_go_at
        if waited < self.give_up_after:
            return
        self.gave_up = True
        if getattr(self._let_go, "close_hung", False):
            reason = "the camera stopped in a capture and never let go of it, not even to close"
        else:
            reason = f"the camera stopped in a capture and could not be opened again in {waited:.0f} s"
        log.error("giving up on the camera: %s", reason)
        self.on_give_up(reason)

    def _read(self):
        if self.source is None:
            if self.clock() < self.retry_at:
                # No camera: pause briefly so the referee loop waits instead of spinning a core.
                self.sleep(min(0.05, max(0.0, self.retry_at - self.clock())))
                return None
            self._open()
            if self.source is None:
                return None
        try:
            frame = self.source.read()
        except Exception as exc:  # a camera driver can fail in many ways; the game must go on
            frame = None
            log.warning("camera read failed: %s", exc)
        if frame is None:
            if getattr(self.source, "recording", False) and getattr(self.source, "exhausted", False):
                self.exhausted = True  # the recording is over: nothing to reopen
                return None
            self.failures += 1
            if self.failures >= self.patience:
                self.failures = 0
                try:
                    self.source.close()
                except Exception:  # noqa: BLE001 - closing a dead camera may fail too
                    pass
                if getattr(self.source, "let_go", False) and self._let_go_at is None:
                    self._let_go, self._let_go_at = self.source, self.clock()
                self.source = None
                self._mark_lost("no frames from the camera")
            return None
        self.failures = 0
        if self.lost:
            self.lost = False
            self.backoff = 1.0
            if self.on_back:
                self.on_back()
        return frame

    @property
    def frame_time(self) -> float | None:
        """The capture time of the camera's last frame (see the module's words)."""
        return getattr(self.source, "frame_time", None) if self.source is not None else None

    def close(self):
        if self.source is not None:
            self.source.close()


class LiveCapture:
    """A live camera read on a thread of its own: :meth:`read` gives the newest frame since the last
    read, waiting at most ``wait`` seconds for one (None when none came), so the referee loop never
    waits long on the camera.

    Found by an audit: picamera2 waits for a frame with no time limit (``capture_arrays``), and an
    OpenCV webcam up to ten seconds a read. Read on the referee loop's thread, a camera that stopped
    mid-night (libcamera's "Camera frontend has timed out", a loose ribbon cable) froze the whole
    table: no button was answered and nothing was said. Now the reads that give nothing add up in
    :class:`ReopeningSource`, which tells the table and reopens the camera, and :meth:`close` waits at
    most ``close_wait`` seconds: a camera stuck in a capture is left to its thread (picamera2's close is
    tried on another one, see ``closes_while_capturing``), and the night goes on without it.
    """

    recording = False  # a live camera does not end
    exhausted = False

    def __init__(self, source, *, wait: float = 0.2, close_wait: float = 2.0, idle: float = 0.02):
        self.source = source
        self.wait, self.close_wait, self.idle = wait, close_wait, idle
        self.frame_time: float | None = None
        self._changed = threading.Condition()
        self._frame = None  # the newest frame not read yet, and its time
        self._time: float | None = None
        self._closing = False
        self._closed = False  # the source was closed (once, by whichever thread got there first)
        self.let_go = False  # close found the capture stuck and left it to its thread
        self._closer: threading.Thread | None = None
        self._thread = threading.Thread(target=self._capture, name="camera-capture", daemon=True)
        self._thread.start()

    def _capture(self) -> None:
        failing = None  # the last read's failure, logged once until a frame comes (reads retry 50 times a second)
        while True:
            with self._changed:
                if self._closing:
                    break
            try:
                frame = self.source.read()
            except Exception as exc:  # noqa: BLE001 - a driver can fail in many ways; the camera is retried
                if str(exc) != failing:
                    log.warning("camera read failed: %s", exc)
                failing, frame = str(exc), None
            else:
                failing = None if frame is not None else failing
            if frame is None:
                time.sleep(self.idle)  # a camera giving nothing must not spin a core
                continue
            with self._changed:
                self._frame, self._time = frame, getattr(self.source, "frame_time", None)
                self._changed.notify_all()
        self._close_source()  # no read runs now: OpenCV's capture may be released safely

    def read(self):
        with self._changed:
            self._changed.wait_for(lambda: self._frame is not None or self._closing, timeout=self.wait)
            frame, self._frame = self._frame, None
            if frame is not None:
                self.frame_time = self._time
            return frame

    def _close_source(self) -> None:
        with self._changed:
            if self._closed:
                return
            self._closed = True
        try:
            self.source.close()
        except Exception as exc:  # noqa: BLE001 - closing a dead camera may fail too
            log.warning("the camera did not close cleanly: %s", exc)

    def close(self) -> None:
        with self._changed:
            self._closing = True
            self._changed.notify_all()
        self._thread.join(self.close_wait)
        if not self._thread.is_alive():
            return  # the capture thread closed the camera
        log.error("the camera gave no frame for a capture (it may have stopped); it is let go")
        self.let_go = True
        if getattr(self.source, "closes_while_capturing", False):
            closer = self._closer = threading.Thread(target=self._close_source, name="camera-close", daemon=True)
            closer.start()
            closer.join(self.close_wait)
            if closer.is_alive():
                log.error("the camera did not close within %.0f s; it is left to its thread", self.close_wait)

    @property
    def close_hung(self) -> bool:
        """The camera was let go and is still stuck: its capture has not returned, nor (for picamera2)
        its close tried on another thread."""
        return self.let_go and self._thread.is_alive() and (self._closer is None or self._closer.is_alive())


def live_capture(source):
    """``source`` read on a thread of its own (:class:`LiveCapture`) when it is a live camera (the Pi
    camera, a webcam); a video file or a folder of frames as it is (each of its frames is read in turn)."""
    if isinstance(source, PiCameraSource) or (isinstance(source, OpenCVSource) and not source.is_file):
        return LiveCapture(source)
    return source


def _giving_frames(source, name: str, tries: int = 2):
    """``source`` once it has given a frame, else a UserError: "auto" falls back to webcam 0, and on a Pi
    whose camera needs picamera2 OpenCV opens the camera's /dev/video0 but reads nothing from it. Found
    by an audit: with picamera2 missing, the table then heard only "the camera has stopped (no frames
    from the camera)" and the doctor "opened, but no frame came", never why."""
    for _ in range(tries):
        try:
            if source.read() is not None:
                return source
        except Exception:  # noqa: BLE001 - a driver's own failure is no frame either
            break
    source.close()
    raise UserError(f"{name} opened but sent no picture")


def open_frame_source(spec: str, *, width: int = 1280, height: int = 960, controls: dict | None = None):
    """Open the source named in the settings: "auto", "picamera2", "webcam:N", a video file or a folder."""
    spec = spec.strip()
    if spec == "picamera2":
        return PiCameraSource(width, height, controls)
    if spec == "auto":
        try:
            return PiCameraSource(width, height, controls)
        except UserError as no_pi_camera:
            try:
                return _giving_frames(OpenCVSource(0, width, height), "webcam 0")
            except UserError as no_webcam:
                # Both reasons: on a Pi the first is the one to act on (found by an audit: only
                # "cannot open webcam 0" was said).
                raise UserError(f"no Pi camera ({no_pi_camera}) and no webcam ({no_webcam})") from None
    if spec.startswith("webcam:"):
        index = spec.split(":", 1)[1]
        if not (index.isascii() and index.isdigit()):
            raise UserError(f"camera source {spec!r}: write webcam:0, webcam:1 ...")
        return OpenCVSource(int(index), width, height)
    path = Path(spec).expanduser()
    if path.is_dir():
        return FolderSource(path)
    if path.is_file():
        return OpenCVSource(str(path))
    raise UserError(
        f"camera source {spec!r} is not 'auto', 'picamera2', 'webcam:N', a video file or a folder of frames"
    )

