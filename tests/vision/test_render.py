"""Tests of the synthetic dice scene renderer (lcr_pi.vision.render)."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from lcr_pi.cli import main
from lcr_pi.vision import render
from lcr_pi.vision import render_geometry as geo
from lcr_pi.vision.render import LCR_FACES, PIP_FACES, random_scene, roll_sequence, write_roll_folder
from lcr_pi.vision.render_designs import PIP_LAYOUT, glyph_fonts

SMALL = (480, 360)


def rng(seed):
    return np.random.default_rng(seed)


def test_same_seed_same_scene_and_different_seed_different_scene():
    a = random_scene(rng(7), size=SMALL, n_dice=3, kind="mixed", allow_cocked=True)
    b = random_scene(rng(7), size=SMALL, n_dice=3, kind="mixed", allow_cocked=True)
    c = random_scene(rng(8), size=SMALL, n_dice=3, kind="mixed", allow_cocked=True)
    assert np.array_equal(a.image, b.image)
    assert [d.face for d in a.dice] == [d.face for d in b.dice]
    assert [d.box for d in a.dice] == [d.box for d in b.dice]
    assert a.style == b.style
    assert not np.array_equal(a.image, c.image)


@pytest.mark.parametrize("kind", ["pip", "lcr", "wild", "mixed"])
def test_faces_valid_boxes_inside_and_around_a_die(kind):
    for seed in range(6):
        scene = random_scene(rng(seed), size=SMALL, n_dice=(1, 3), kind=kind, allow_cocked=True)
        h, w = scene.image.shape[:2]
        assert scene.image.dtype == np.uint8 and scene.image.shape == (360, 480, 3)
        assert 1 <= len(scene.dice) <= 3
        allowed = {"pip": PIP_FACES, "lcr": ("L", "C", "R", "dot"), "wild": LCR_FACES,
                   "mixed": PIP_FACES + LCR_FACES}[kind]
        json.dumps(scene.style)  # serialisable
        for die in scene.dice:
            assert die.face in allowed
            x0, y0, x1, y1 = die.box
            assert 0 <= x0 < x1 <= w and 0 <= y0 < y1 <= h
            assert die.corners.shape == (4, 2) and die.corners.dtype == np.float32
            assert x1 - x0 >= 8 and y1 - y0 >= 8
            # The top face is drawn there: it differs from the plain background around the die.
            patch = scene.image[int(y0):int(np.ceil(y1)), int(x0):int(np.ceil(x1))].astype(np.float32)
            assert patch.std() > 4, f"top face of {die.design} looks empty"


def test_top_face_region_differs_from_an_empty_frame():
    scene = random_scene(rng(3), size=SMALL, n_dice=1, kind="pip")
    d = scene.dice[0]
    x0, y0, x1, y1 = (int(v) for v in d.box)
    inside = scene.image[y0:y1, x0:x1].reshape(-1, 3).mean(0)
    ring = np.concatenate([scene.image[max(0, y0 - 40):y0, x0:x1].reshape(-1, 3),
                           scene.image[y1:y1 + 40, x0:x1].reshape(-1, 3)])
    assert len(ring) and np.abs(inside - ring.mean(0)).max() > 10


def test_pip_die_opposite_faces_sum_to_seven_and_sides_are_real_faces():
    for i, face in enumerate(PIP_LAYOUT):
        assert int(face) + int(PIP_LAYOUT[geo.OPPOSITE[i]]) == 7
    # For every resting pose, the top face and the four visible side faces are five distinct faces,
    # and the hidden bottom face is 7 - top.
    for top in range(6):
        for yaw in (0.0, 0.7, 2.0):
            r = geo.resting_rotation(top, yaw)
            up = (r @ geo.FACE_NORMALS.T)[2]
            assert geo.top_face_index(r) == top
            bottom = int(np.argmin(up))
            assert int(PIP_LAYOUT[top]) + int(PIP_LAYOUT[bottom]) == 7
            sides = [PIP_LAYOUT[k] for k in range(6) if abs(up[k]) < 0.5]
            assert len(sides) == 4 and PIP_LAYOUT[top] not in sides


def test_rendered_truth_matches_geometry_of_the_top_face():
    scene = random_scene(rng(11), size=SMALL, n_dice=2, kind="pip")
    for d in scene.dice:
        x0, y0, x1, y1 = d.box
        c = d.corners
        assert abs(c[:, 0].min() - x0) < 0.2 and abs(c[:, 1].max() - y1) < 0.2


def test_cocked_dice_appear_when_allowed_and_never_otherwise():
    cocked = [d.cocked for s in range(12) for d in random_scene(rng(s), size=SMALL, n_dice=(2, 3), allow_cocked=True).dice]
    assert any(cocked)
    plain = [d.cocked for s in range(6) for d in random_scene(rng(s), size=SMALL, n_dice=(2, 3)).dice]
    assert not any(plain)


def test_write_roll_folder_matches_the_shared_readme_format(tmp_path):
    scenes = [random_scene(rng(s), size=SMALL, n_dice=2, kind="lcr") for s in range(3)]
    write_roll_folder(tmp_path / "roll", scenes, jpeg_quality=85)
    lines = (tmp_path / "roll" / "labels.jsonl").read_text().splitlines()
    assert len(lines) == 3
    for scene, line in zip(scenes, lines):
        label = json.loads(line)
        assert label["image"].startswith("images/") and label["image"].endswith(".jpg")
        img = cv2.imread(str(tmp_path / "roll" / label["image"]))
        assert img is not None and img.shape == scene.image.shape
        assert label["faces"] == [d.face for d in scene.dice]
        assert len(label["boxes"]) == len(label["faces"])
        assert all(len(b) == 4 and all(isinstance(v, float) for v in b) for b in label["boxes"])


def test_roll_sequence_moves_then_rests_and_forces_faces():
    frames, final = roll_sequence(rng(4), size=SMALL, faces=["L", "C", "dot"], kind="lcr", n_frames=16)
    assert len(frames) == 16 and all(f.shape == (360, 480, 3) for f in frames)
    assert [d.face for d in final.dice] == ["L", "C", "dot"]
    seq = final.style["sequence"]
    assert 0 < seq["rest_frame"] < 16 and seq["hand_frames"] is None

    def changed(a, b):
        # Share of pixels that changed beyond sensor noise.
        a, b = (cv2.GaussianBlur(x, (0, 0), 2).astype(np.int16) for x in (a, b))
        return float((np.abs(a - b).max(axis=2) > 20).mean())

    assert changed(frames[1], frames[2]) > 0.002
    assert changed(frames[-2], frames[-1]) == 0
    assert np.array_equal(final.image, frames[-1])


def test_roll_sequence_hand_comes_and_goes():
    frames, final = roll_sequence(rng(5), size=SMALL, kind="pip", n_frames=20, hand=True, n_dice=2)
    first, last = final.style["sequence"]["hand_frames"]
    assert final.style["sequence"]["rest_frame"] < first <= last < 19
    rest = frames[-1].astype(np.int16)
    mid = frames[(first + last) // 2].astype(np.int16)
    changed = (np.abs(mid - rest).max(axis=2) > 40).mean()
    assert changed > 0.03, "the hand should cover a visible part of the frame"
    assert np.abs(frames[-2].astype(np.int16) - rest).mean() < 8


def test_hand_occluder_in_a_still_scene():
    scene = random_scene(rng(2), size=SMALL, n_dice=2, occluder="hand")
    occ = scene.style["occluder"]
    assert occ["kind"] == "hand" and len(occ["box"]) == 4
    assert random_scene(rng(2), size=SMALL, n_dice=2).style["occluder"] is None


def test_pools_share_no_names():
    train, holdout = render.pool_names("train"), render.pool_names("holdout")
    for key in train:
        assert train[key] and holdout[key], key
        assert not train[key] & holdout[key], key
    scene = random_scene(rng(1), size=SMALL, n_dice=3, kind="lcr", pool="holdout")
    assert set(scene.style["fonts"]) <= holdout["fonts"]
    assert scene.style["tray"]["floor"] in holdout["surfaces"] | {"plastic-black"}


def test_glyph_asset_has_real_font_letters():
    fonts = glyph_fonts()
    assert len(fonts) >= 8
    for name, (pool, masks) in fonts.items():
        assert pool in ("train", "holdout") and masks.shape == (5, 96, 96)
        assert all(masks[i].max() > 200 for i in range(4)), name


def test_presets_give_their_documented_sizes():
    pi = random_scene(rng(0), preset="pi-black-tray", n_dice=3, kind="lcr")
    assert pi.image.shape == (2464, 3280, 3)
    assert pi.style["tray"]["kind"] == "round" and pi.style["tray"]["floor"] == "plastic-black"
    for d in pi.dice:
        side = np.linalg.norm(d.corners[1] - d.corners[0])
        assert 45 <= side <= 150
    felt = random_scene(rng(0), preset="felt-table")
    assert felt.image.shape == (960, 1280, 3) and felt.style["tray"]["floor"].startswith("felt")


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="kind"):
        random_scene(rng(0), kind="dice")
    with pytest.raises(ValueError, match="pool"):
        random_scene(rng(0), pool="test")
    with pytest.raises(ValueError, match="preset"):
        random_scene(rng(0), preset="moon")
    with pytest.raises(ValueError, match="face 2"):
        roll_sequence(rng(0), faces=["L", "7"], kind="lcr", size=SMALL)


def test_render_command_writes_a_roll_folder(tmp_path, capsys):
    out = tmp_path / "roll"
    assert main(["render", str(out), "--n", "2", "--seed", "3", "--kind", "lcr", "--size", "320x240", "--dice", "2"]) == 0
    lines = (out / "labels.jsonl").read_text().splitlines()
    assert len(lines) == 2 and all(len(json.loads(l)["faces"]) == 2 for l in lines)
    assert main(["render", str(out), "--n", "2"]) == 2  # refuses to overwrite
    assert main(["render", str(tmp_path / "x"), "--size", "big"]) == 2
    assert main(["render", str(tmp_path / "x"), "--n", "zero"]) == 2
    assert main(["render", str(tmp_path / "x"), "--preset", "moon"]) == 2
    err = capsys.readouterr().err
    assert "--size" in err and "--n" in err and "moon" in err
