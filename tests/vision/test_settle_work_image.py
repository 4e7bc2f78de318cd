"""The settle detector's cheap work image: the shrink straight from the colour frame and the coarse
local-brightness blur must keep what the decisions need (small dice, noise immunity, the normalised
scene)."""

from __future__ import annotations

import cv2
import numpy as np

from lcr_pi.vision.render import random_scene, roll_sequence
from lcr_pi.vision.settle import WORK_WIDTH, SettleDetector, normalised


def reports(detector: SettleDetector, frames) -> list[int]:
    return [i for i, f in enumerate(frames) if detector.update(f).state == "settled"]


def area_work_image(frame: np.ndarray) -> np.ndarray:
    """The work image as it was made before the cheap shrink: grey at full size, then area-averaged."""
    h, w = frame.shape[:2]
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    small = cv2.resize(grey, (WORK_WIDTH, round(h * WORK_WIDTH / w)), interpolation=cv2.INTER_AREA)
    return cv2.GaussianBlur(small, (3, 3), 0)


def test_small_dice_in_a_full_size_frame_are_seen_and_a_second_roll_is_reported():
    # A Pi camera high over the tray: at 1280x960 the dice are ~33 pixels across, ~8 work pixels.
    fa, a = roll_sequence(np.random.default_rng(2), size=(1280, 960), preset="pi-black-tray",
                          faces=["2", "5"], n_frames=24)
    fb, b = roll_sequence(np.random.default_rng(2), size=(1280, 960), preset="pi-black-tray",
                          faces=["6", "3"], n_frames=24)
    assert a.style["tray"] == b.style["tray"]
    assert max(d.box[2] - d.box[0] for d in a.dice + b.dice) < 40
    got = reports(SettleDetector(), fa + fb)
    assert len(got) == 2, got
    assert a.style["sequence"]["rest_frame"] <= got[0] < len(fa)
    assert got[1] - len(fa) >= b.style["sequence"]["rest_frame"]


def test_heavy_sensor_noise_and_jpeg_on_a_full_size_frame_stay_quiet():
    # At 1280x960 the shrink is 4x (the 640x480 noise test in test_settle.py shrinks only 2x, where
    # the bilinear shrink is an exact area average). Taking one pixel in 16 would see motion here.
    tray = random_scene(np.random.default_rng(4), size=(1280, 960), n_dice=3).image
    rng = np.random.default_rng(0)
    frames = [np.clip(tray + rng.normal(0, 10.0, tray.shape), 0, 255).astype(np.uint8) for _ in range(8)]
    jpeg = [cv2.imdecode(cv2.imencode(".jpg", f, [cv2.IMWRITE_JPEG_QUALITY, 60])[1], cv2.IMREAD_COLOR) for f in frames]
    for clip in (frames, jpeg):
        detector = SettleDetector()
        updates = [detector.update(f) for f in clip]
        assert {u.state for u in updates} == {"quiet"}
        assert max(u.motion for u in updates) < detector.motion_threshold / 4


def test_the_cheap_shrink_keeps_the_picture_of_the_area_average():
    frame = random_scene(np.random.default_rng(7), size=(1280, 960), n_dice=3).image
    detector = SettleDetector()
    detector.update(frame)
    work = detector._recent[-1][1]  # (time, work image)
    reference = area_work_image(frame)
    assert work.shape == reference.shape == (240, 320)
    diff = cv2.absdiff(work, reference)
    assert float(diff.mean()) < 1.0
    assert float((diff > detector.pixel_delta).mean()) < 0.01  # only at the sharpest edges


def test_the_coarse_local_brightness_matches_the_full_size_blur():
    # The normalised scenes are compared against change_delta (0.18): the coarse blur must stay far
    # inside that, on camera images and on the worst case, pure noise in a one-pixel strip.
    scenes = [random_scene(np.random.default_rng(s), size=(1280, 960)).image for s in (0, 1)]
    greys = [area_work_image(img) for img in scenes]
    greys.append(greys[0][:137, :211].copy())  # a tray region of odd size
    rng = np.random.default_rng(3)
    noise = [rng.integers(0, 256, shape, dtype=np.uint8) for shape in ((1, 320), (240, 1), (40, 40))]
    for grey, tolerance in [(g, 0.015) for g in greys] + [(g, 0.03) for g in noise]:
        for sigma in (2.0, 8.0, 13.0, 20.0, 30.0, 60.0):
            g = grey.astype(np.float32) + 8.0
            exact = g / cv2.GaussianBlur(g, (0, 0), sigma)
            got = normalised(grey, sigma)
            assert got.shape == grey.shape and got.dtype == np.float32
            assert float(np.abs(got - exact).max()) < tolerance, (grey.shape, sigma)


def test_a_hand_hovering_is_obstructed_with_the_calibrated_die_size_too():
    # With die_px the hand check has its own size rule (and its own shortcut): same behaviour.
    frames, scene = roll_sequence(np.random.default_rng(3), size=(640, 480), n_frames=30, hand=True)
    first, last = scene.style["sequence"]["hand_frames"]
    hover = (first + last) // 2
    clip = frames[:hover + 1] + [frames[hover]] * 12 + frames[hover + 1:]
    die_px = float(np.median([d.box[2] - d.box[0] for d in scene.dice]))
    detector = SettleDetector(die_px=die_px)
    got = [detector.update(f).state for f in clip]
    assert "obstructed" in got[hover:hover + 13]
    settled = [i for i, s in enumerate(got) if s == "settled"]
    assert len(settled) == 1, got
    assert settled[0] >= scene.style["sequence"]["rest_frame"]
    assert not (hover - 3 <= settled[0] <= hover + 12), got


def test_grey_frames_work_as_well_as_colour_ones():
    empty = np.full((960, 1280), 90, np.uint8)
    dice = empty.copy()
    dice[400:440, 600:640] = 250  # one small die, 10 work pixels across
    detector = SettleDetector(still_seconds=0.05)
    got = [detector.update(f).state for f in (empty, empty, dice, dice, dice, dice, dice)]
    assert got == ["quiet", "quiet", "moving", "still", "settled", "quiet", "quiet"]
