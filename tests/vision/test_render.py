"""Tests of the synthetic dice scene renderer (lcr_pi.vision.render)."""

from __future__ import annotations

import json
import warnings

import cv2
import numpy as np
import pytest

from lcr_pi.cli import main
from lcr_pi.vision import render
from lcr_pi.vision import render_geometry as geo
from lcr_pi.vision.render import LCR_FACES, PIP_FACES, POOLS, random_scene, roll_sequence, write_roll_folder
from lcr_pi.vision import render_designs
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


def test_roll_sequence_films_the_same_throw_at_another_frame_rate():
    # The film's frames are 1/30 s; at 60 fps the same throw (path, rest, faces) has twice the frames,
    # and frame 2j of it is taken when frame j of the 30 fps film was.
    slow, a = roll_sequence(rng(4), size=SMALL, n_frames=16, hand=True)
    fast, b = roll_sequence(rng(4), size=SMALL, n_frames=16, hand=True, fps=60)
    sa, sb = a.style["sequence"], b.style["sequence"]
    assert len(fast) == 32 and sb["fps"] == 60.0 and sa["fps"] == 30.0
    assert [d.face for d in a.dice] == [d.face for d in b.dice] and [d.box for d in a.dice] == [d.box for d in b.dice]
    assert sa["rest_time"] == sb["rest_time"] == sa["rest_frame"] / 30 and sb["rest_frame"] == 2 * sa["rest_frame"]
    assert sb["hand_frames"] == [2 * k for k in sa["hand_frames"]]

    def apart(x, y):
        diff = np.abs(cv2.GaussianBlur(x, (0, 0), 2).astype(np.int16) - cv2.GaussianBlur(y, (0, 0), 2))
        return float((diff.max(axis=2) > 40).mean())

    for j in (3, sa["rest_frame"] - 2):  # moving: the picture taken at the same time is the nearest
        near = [apart(slow[j], fast[2 * j + d]) for d in (-1, 0, 1)]
        assert near[1] < min(near[0], near[2]) / 2, near
    few, c = roll_sequence(rng(4), size=SMALL, n_frames=16, fps=7.5)
    assert len(few) == 4 and c.style["sequence"]["rest_time"] == sa["rest_time"]
    with pytest.raises(ValueError, match="fps"):
        roll_sequence(rng(4), size=SMALL, fps=0)


@pytest.mark.parametrize("ending", ["wobble", "topple"])
def test_roll_sequence_can_end_with_a_die_rocking_or_falling_off_its_edge(ending):
    frames, scene = roll_sequence(rng(9), size=SMALL, n_frames=30, fps=60, ending=ending, faces=["4"])
    seq = scene.style["sequence"]
    plain, _ = roll_sequence(rng(9), size=SMALL, n_frames=30, fps=60, faces=["4"])
    tilts = seq["tilts"]
    assert len(tilts) == len(frames) and seq["ending"] == ending
    moving = [j for j, t in enumerate(tilts) if t != 0.0]
    assert moving and max(moving) < seq["rest_frame"] and all(t == 0.0 for t in tilts[seq["rest_frame"]:])
    if ending == "topple":
        assert 40 < abs(tilts[moving[0]]) < 45  # on its edge, nearly balanced, then down
    else:
        assert min(tilts) < -3 < 3 < max(tilts)  # over one edge and the other
    assert [d.face for d in scene.dice] == ["4"]
    assert np.abs(frames[-1].astype(np.int16) - plain[-1]).mean() < 4  # the same rest
    with pytest.raises(ValueError, match="ending"):
        roll_sequence(rng(9), size=SMALL, ending="spin")


def test_roll_sequence_can_start_with_the_empty_tray():
    frames, final = roll_sequence(rng(5), size=SMALL, kind="pip", n_frames=10, hand=True, n_dice=2, empty_frames=2)
    seq = final.style["sequence"]
    assert len(frames) == 12 and seq["n_frames"] == 12
    assert seq["rest_frame"] >= 2 and seq["hand_frames"][0] >= seq["rest_frame"]
    empty, rest = frames[0].astype(np.int16), frames[-1].astype(np.int16)
    assert np.abs(frames[1].astype(np.int16) - empty).mean() < 4  # the same empty tray, new noise
    changed = np.abs(rest - empty).max(axis=2) > 40
    inside = np.zeros_like(changed)
    for d in final.dice:  # the dice (and their shadows nearby) are what differs
        x0, y0, x1, y1 = (int(v) for v in d.box)
        m = int(x1 - x0)
        inside[max(0, y0 - m):y1 + m, max(0, x0 - m):x1 + m] = True
    assert changed[inside].mean() > 0.02 and changed[~inside].mean() < 0.002


def test_a_table_keeps_its_camera_tray_and_dice_and_throws_them_anew():
    table = render.Table(rng(9), size=SMALL, max_dice=3, kind="lcr", pool="holdout")
    empty = table.empty().astype(np.int16)
    rolls = [table.roll(n) for n in (1, 3, 2, 3)]
    assert [len(r.dice) for r in rolls] == [1, 3, 2, 3]
    assert all(r.style["camera"] == rolls[0].style["camera"] and r.style["tray"] == rolls[0].style["tray"] for r in rolls)
    assert {d.design for r in rolls for d in r.dice} == {table.design.name}  # one set of dice all night
    assert all(d.face in LCR_FACES and not d.cocked for r in rolls for d in r.dice)
    # thrown anew: the dice lie elsewhere from roll to roll
    assert len({tuple(np.round(np.asarray(r.dice[0].corners).mean(0))) for r in rolls}) == len(rolls)
    for roll in rolls:  # the same tray under the same light: only the dice (and their shadows) differ
        changed = np.abs(roll.image.astype(np.int16) - empty).max(axis=2) > 40
        inside = np.zeros_like(changed)
        for d in roll.dice:
            x0, y0, x1, y1 = (int(v) for v in d.box)
            m = int(x1 - x0)
            inside[max(0, y0 - m):y1 + m, max(0, x0 - m):x1 + m] = True
        assert changed[inside].mean() > 0.02 and changed[~inside].mean() < 0.002
    again = render.Table(rng(9), size=SMALL, max_dice=3, kind="lcr", pool="holdout")
    again.empty()
    assert np.array_equal(again.roll(1).image, rolls[0].image)  # reproducible from the seed
    with pytest.raises(ValueError, match="1 to 3 dice, not 4"):
        table.roll(4)
    with pytest.raises(ValueError, match="one table's set of dice, not 'mixed'"):
        render.Table(rng(1), size=SMALL, kind="mixed")
    with pytest.raises(ValueError, match="max_dice must be at least 1, not 0"):
        render.Table(rng(1), size=SMALL, max_dice=0)


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


def test_train_pool_has_many_fonts_and_no_copy_of_a_holdout_family():
    train, holdout = render_designs.fonts_in("train"), render_designs.fonts_in("holdout")
    assert len(train) >= 60 and len(holdout) == 6
    # A holdout font's family (its name without the weight) never appears in the train pool.
    families = ("c059", "dejavu-serif", "freeserif", "liberation-sans", "urw-bookman")
    assert not [f for f in train if f.startswith(families)]


def test_train_designs_are_widened_and_holdout_designs_never():
    train = [render_designs.random_design(rng(s), k, "train") for s in range(60) for k in ("pip", "lcr", "wild")]
    holdout = [render_designs.random_design(rng(s), k, "holdout") for s in range(60) for k in ("pip", "lcr", "wild")]
    named_pip = {b for b, _ in render_designs.PIP_BODIES["train"].values()}
    letters = [d for d in train if d.kind != "pip"]
    assert sum(d.glyph_weight != 0 for d in letters) > len(letters) / 2
    assert sum(d.glyph_stretch != 1.0 for d in letters) > len(letters) / 3
    assert any(d.glyph_shear for d in letters) and any(d.print_offset != (0.0, 0.0) for d in letters)
    assert sum(d.body not in named_pip for d in train if d.kind == "pip") > 10  # pips on bodies of any colour
    for d in holdout:
        assert (d.glyph_weight, d.glyph_stretch, d.glyph_shear, d.print_offset) == (0.0, 1.0, 0.0, (0.0, 0.0))
        assert d.body in {b for b, _ in render_designs.PIP_BODIES["holdout"].values()} | {
            b for b, _ in render_designs.LCR_BODIES["holdout"].values()}
    # The preset's named ivory body is kept even in the train pool.
    assert render_designs.random_design(rng(3), "lcr", "train", "ivory").body == render_designs.LCR_BODIES["train"]["ivory"][0]


def test_a_shaped_letter_is_still_the_letter_moved_and_weighted():
    plain = render_designs.DieDesign(name="t", kind="lcr", body=(240, 240, 240), ink=(20, 20, 20), font="dejavu-sans")
    heavy = render_designs.replace(plain, name="t2", glyph_weight=3.0)
    moved = render_designs.replace(plain, name="t3", print_offset=(0.08, 0.0))
    a, _ = render_designs.face_texture(plain, "L", 96, 0, 0)
    b, _ = render_designs.face_texture(heavy, "L", 96, 0, 0)
    c, _ = render_designs.face_texture(moved, "L", 96, 0, 0)
    ink = lambda t: t.mean(2) < 128  # noqa: E731
    assert ink(b).sum() > 1.3 * ink(a).sum()
    xs_a, xs_c = np.nonzero(ink(a))[1], np.nonzero(ink(c))[1]
    assert abs((xs_c.mean() - xs_a.mean()) - 0.08 * 96) < 1.5 and abs(ink(c).sum() - ink(a).sum()) < 0.05 * ink(a).sum()


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
    (out / "labels.jsonl").unlink()  # pictures without their labels (a capture's, say) are not written over
    before = (out / "images" / "0000.jpg").read_bytes()
    assert main(["render", str(out), "--n", "1", "--seed", "9"]) == 2
    assert "already holds pictures" in capsys.readouterr().err and (out / "images" / "0000.jpg").read_bytes() == before


# --------------------------------------------------------------------------------------------
# Every die in the truth is drawn; nothing is projected from behind the lens.


@pytest.fixture
def raw_render(monkeypatch):
    """Render helpers without lens and sensor effects (gain, noise, blur, JPEG), so that pixels the
    dice change can be told exactly from pixels they leave alone; ``bare`` renders the same scene
    (same seed, same random draws) without drawing any die or die shadow."""
    monkeypatch.setattr(render, "_finish", lambda stage, rng, base, raw, boxes: raw)

    def bare(fn, *args, **kwargs):
        with monkeypatch.context() as m:
            m.setattr(render, "_draw_die", lambda *a, **k: None)
            m.setattr(render, "_die_shadow", lambda *a, **k: None)
            return fn(*args, **kwargs)

    return bare


def _top_face_drawn(image, bare, die) -> bool:
    """The die's top face lies inside the frame and most of it differs from the scene without dice."""
    h, w = image.shape[:2]
    c = die.corners
    if c[:, 0].min() < 0 or c[:, 1].min() < 0 or c[:, 0].max() > w or c[:, 1].max() > h:
        return False
    m = np.zeros((h, w), np.uint8)
    cv2.fillConvexPoly(m, np.round(c * 16).astype(np.int32), 255, cv2.LINE_8, 4)
    inside = cv2.erode(m, np.ones((3, 3), np.uint8)) > 0
    diff = np.abs(image.astype(np.int16) - bare.astype(np.int16)).max(axis=2)[inside]
    return inside.sum() >= 20 and float((diff > 2).mean()) > 0.5


def _check_sequence_drawn(raw_render, seed, **kw):
    frames, scene = roll_sequence(rng(seed), **kw)
    bare, _ = raw_render(roll_sequence, rng(seed), **kw)
    seq = scene.style["sequence"]
    hand = seq["hand_frames"]
    for k in range(seq["rest_frame"], len(frames)):
        if hand and hand[0] - 1 <= k <= hand[1] + 1:
            continue
        for i, die in enumerate(scene.dice):
            assert _top_face_drawn(frames[k], bare[k], die), f"seed {seed} {kw}: die {i} not drawn in frame {k}"
    return scene


@pytest.mark.parametrize("seed, kw", [
    (7, dict(size=(640, 480), faces=["2", "5"])),                   # die ~120 px, lens was 58 mm up
    (219, dict(size=(640, 480), kind="pip", hand=True)),
    (207, dict(size=(1280, 960), kind="pip", hand=True)),           # dice 230-290 px
    (215, dict(size=(1280, 960), kind="wild", hand=True)),
])
def test_big_dice_under_a_close_camera_are_drawn(raw_render, seed, kw):
    # These rendered no die at all: the lens was under 3 die sides from the dice, and such dice were
    # skipped. The stage now keeps the lens MIN_CAMERA_SIDES sides up (a narrower lens instead).
    scene = _check_sequence_drawn(raw_render, seed, n_frames=10, **kw)
    cam = scene.style["camera"]
    assert cam["height_mm"] >= render.MIN_CAMERA_SIDES * cam["die_side_mm"] * np.cos(np.radians(cam["tilt_deg"])) - 0.5


def test_truth_dice_are_drawn_over_sampled_sizes_kinds_and_presets(raw_render):
    sizes = [(640, 480), (1280, 960), (320, 240), (800, 600), (480, 360)]
    kinds = ["pip", "lcr", "wild", "mixed"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflowing casts, no NaN
        for seed in range(100, 124):
            kw = dict(size=sizes[seed % 5], kind=kinds[seed % 4], n_dice=(1, 5), pool=POOLS[seed % 2],
                      allow_cocked=seed % 3 == 0, preset="felt-table" if seed % 6 == 0 else None)
            scene = random_scene(rng(seed), **kw)
            bare = raw_render(random_scene, rng(seed), **kw)
            for i, die in enumerate(scene.dice):
                assert _top_face_drawn(scene.image, bare.image, die), f"seed {seed} {kw}: die {i} not drawn"
        for seed in range(4):
            _check_sequence_drawn(raw_render, 300 + seed, size=sizes[seed], kind=kinds[seed % 3], n_frames=8,
                                  hand=seed % 2 == 1)


@pytest.mark.parametrize("seed, size, kind", [(42, (480, 360), "pip"), (45, (640, 480), "lcr"), (82, (480, 360), "pip")])
def test_tray_partly_behind_the_lens_draws_without_overflow(seed, size, kind):
    # These scenes' tray rims reached behind a steeply tilted camera; projecting those points gave
    # huge pixel coordinates ("invalid value encountered in cast" and garbage polygons).
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        random_scene(rng(seed), size=size, n_dice=(1, 3), kind=kind, pool=POOLS[seed % 2],
                     allow_cocked=seed % 3 == 0, occluder="hand" if seed % 7 == 0 else None)


def test_polygons_are_clipped_at_the_lens_and_around_the_frame():
    cam = geo.Camera.looking_at(640, 480, 70.0, 60.0, 28.0, 0.0)
    # A tray rim far wider than the view, 30 mm up: part of it is behind the lens.
    a = np.linspace(0, 2 * np.pi, 96, endpoint=False)
    rim = np.stack([400 * np.cos(a), 400 * np.sin(a), np.full(96, 30.0)], 1)
    assert (cam.depth(rim) <= 0).any()
    pts = render._image_poly(cam, rim)
    assert len(pts) >= 3 and np.isfinite(pts).all()
    assert pts.min() >= -2 * 640 and pts[:, 0].max() <= 3 * 640 and pts[:, 1].max() <= 3 * 480
    behind = rim.copy()
    behind[:, 2] = 500.0  # entirely above the lens
    assert render._poly(cam, behind) is None


@pytest.mark.parametrize("seed", [2, 3])
@pytest.mark.parametrize("hand", [False, True])
def test_long_sequences_never_allocate_beyond_the_frame(seed, hand):
    # Reported: a 170 GiB canvas in _draw_die and "array is too big" in _die_shadow for these seeds
    # (boxes around wildly projected points). Every drawing box is now cut to the frame.
    frames, scene = roll_sequence(rng(seed), size=(640, 480), n_frames=30, hand=hand)
    assert len(frames) == 30 and all(f.shape == (480, 640, 3) for f in frames)


def test_dice_off_the_frame_or_behind_the_lens_are_skipped_within_the_frame():
    stage, dice = render._scene_setup(rng(5), (320, 240), 1, "pip", "train", None, None, False)
    frame = stage.background.copy()
    d = dice[0]
    cam = stage.camera
    for centre in ([5000.0, 0.0, 8.0], [0.0, 0.0, float(cam.position[2])], cam.position + [0, 0, 50.0]):
        far = render._Die(d.design, d.side, d.rotation, np.array(centre, float), d.spins)
        for draw in (render._draw_die, render._die_shadow):
            box = draw(frame, stage, far)
            assert box is None or (0 <= box[0] <= box[2] <= 320 and 0 <= box[1] <= box[3] <= 240)
    # A die straddling the frame's edge is drawn, inside the frame only.
    edge = render._Die(d.design, d.side, d.rotation, np.array([*cam.floor_point(0, 120)[:2], d.centre[2]]), d.spins)
    box = render._draw_die(frame, stage, edge)
    assert box is not None and box[0] == 0 and box[2] <= 320


# --------------------------------------------------------------------------------------------
# The shortcuts that make rendering fast give the same pictures as the long way round.


def _blurry_stage():
    for seed in range(40):
        stage, dice = render._scene_setup(rng(seed), (480, 360), 2, "pip", "train", None, None, False)
        if stage.blur_sigma > 0.8:
            return stage, dice
    raise AssertionError("no scene with lens blur")


def test_relighting_a_box_matches_lighting_the_whole_frame():
    stage, dice = _blurry_stage()
    raw = stage.background.copy()
    boxes = render._draw_dice(raw, stage, dice)
    whole = render._light(stage, raw)
    assert boxes
    for x0, y0, x1, y1 in boxes + [(0, 0, 480, 9), (470, 350, 480, 360)]:
        assert np.array_equal(render._light(stage, raw, (x0, y0, x1, y1)), whole[y0:y1, x0:x1])


def test_still_dice_drawn_once_give_the_frame_drawn_each_time():
    stage, dice = _blurry_stage()
    each_time, _ = render._compose(stage, dice, rng(1))
    still = render._still(stage, render._background(stage), dice)
    once, _ = render._compose(stage, [], rng(1), base=still)
    assert np.array_equal(each_time, once)


@pytest.mark.parametrize("vec", [(-6.0, 2.5), (25.0, 0.0), (-14.0, 30.0)])  # both ways of smearing
def test_motion_blur_matches_a_line_kernel(vec):
    from lcr_pi.vision.render_surfaces import line_kernel, motion_blur

    img = np.zeros((120, 120, 4), np.float32)
    cv2.rectangle(img, (45, 40), (75, 80), (200, 120, 40, 1.0), -1)
    ref = cv2.filter2D(img, -1, line_kernel(vec), borderType=cv2.BORDER_CONSTANT)
    fast = motion_blur(img, vec)
    assert abs(float(fast[..., 3].sum()) - float(img[..., 3].sum())) < 0.02 * float(img[..., 3].sum())
    assert float(np.abs(fast - ref).mean()) < 0.15 * float(np.abs(img - ref).mean())


def test_some_train_pip_dice_are_marbled_and_no_holdout_or_letter_die_is():
    train = [render_designs.random_design(rng(s), "pip", "train") for s in range(200)]
    marbled = [d for d in train if d.marble is not None]
    assert 0.12 * len(train) <= len(marbled) <= 0.4 * len(train)
    assert all(d.name.endswith("/marbled") for d in marbled)
    letters = [render_designs.random_design(rng(s), k, "train") for s in range(60) for k in ("lcr", "wild")]
    holdout = [render_designs.random_design(rng(s), k, "holdout") for s in range(60) for k in ("pip", "lcr", "wild")]
    named = [render_designs.random_design(rng(s), "pip", "train", "ivory") for s in range(60)]  # the preset's body
    assert not [d.name for d in letters + holdout + named if d.marble is not None]


def test_a_marbled_face_shows_veins_of_its_second_colour_and_keeps_its_pips():
    plain = render_designs.DieDesign(name="m", kind="pip", body=(40, 40, 170), ink=(240, 240, 240))
    marbled = render_designs.replace(plain, name="m/marbled", marble=(25, 25, 25))
    a, _ = render_designs.face_texture(plain, "5", 96, 0, 0)
    b, _ = render_designs.face_texture(marbled, "5", 96, 0, 0)
    vein = np.abs(b - np.float32((25, 25, 25))).max(2) < 30
    body = np.abs(b - np.float32((40, 40, 170))).max(2) < 30
    assert 0.1 < vein.mean() < 0.7 and body.mean() > 0.2
    pips = a.mean(2) > 200  # the white pips are painted over the veins
    assert (b[pips].mean(1) > 180).mean() > 0.9
