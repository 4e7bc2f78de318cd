"""The calibration rule (`training.choose_settings`) on a small hand-made set of held-out reads.

No models and no torch: the held-out reads are written out as the reader's finds and class
probabilities, so the rule itself is tested exactly.
"""

from types import SimpleNamespace

import numpy as np

from lcr_pi.vision.classify import CLASSES
from lcr_pi.vision.detect import Detection
from lcr_pi.vision.reader import ReaderSettings
from lcr_pi.vision.training import choose_settings


def _frame(face_read: str, confidence: float, face_true: str, group: str):
    """One held-out frame with one die at (100, 100) read as ``face_read`` with ``confidence``."""
    probs = np.zeros(len(CLASSES), np.float32)
    probs[CLASSES.index(face_read)] = confidence
    probs[CLASSES.index("background")] = 1 - confidence  # so the reader's confidence is exactly `confidence`
    probs = probs[None]
    label = SimpleNamespace(faces=(face_true,), boxes=((80.0, 80.0, 120.0, 120.0),), box_kind="die")
    return [Detection(100.0, 100.0, 40.0, 40.0, 0.0, 0.9)], (probs, probs), (480, 640, 3), label, "pip", group


def test_the_threshold_that_keeps_every_wrong_read_unsure_is_chosen(capsys):
    # Right reads at 0.96-0.995; one wrong read at 0.94 in each group: only a face confidence above
    # 0.94 keeps it from being announced, and the rule takes the least strict such threshold.
    cached = [_frame("3", c, "3", g) for g in ("real", "synthetic") for c in (0.96, 0.97, 0.98, 0.99, 0.995)]
    cached += [_frame("5", 0.94, "4", g) for g in ("real", "synthetic")]
    chosen = choose_settings(cached, ReaderSettings(), max_silent=0.0)
    assert chosen.sure_confidence == 0.95
    assert "chose" in capsys.readouterr().out


def test_with_no_wrong_reads_the_loosest_threshold_allowed_wins():
    cached = [_frame("2", c, "2", g) for g in ("real", "synthetic") for c in (0.55, 0.9, 0.99)]
    assert choose_settings(cached, ReaderSettings(), max_silent=0.0, min_confidence=0.5).sure_confidence == 0.5
    # By default never under 0.95 (0.9 until 2026-12-05), however few wrong reads the held-out frames show.
    assert choose_settings(cached, ReaderSettings(), max_silent=0.0).sure_confidence == 0.95


def test_held_out_frames_that_mix_pip_and_lcr_dice_are_not_calibrated_on():
    """The renderer's "mixed" scenes hold pip and LCR dice in one frame: no table rolls those, and read
    as one kind their other dice cannot be right, so calibration leaves them out."""
    from lcr_pi.vision.training import Sample, read_held_out

    class NoDice:  # a reader double: finds nothing, so no model is needed
        settings = ReaderSettings(tta_rotations=2)
        _classifier = None

        def find_dice(self, image, doubt=None):
            return []

    def sample(faces):
        n = len(faces)
        return Sample(np.zeros((48, 64, 3), np.uint8), [(10.0 + 20 * i, 10.0) for i in range(n)], [(8.0, 8.0)] * n,
                      [0.0] * n, list(faces), held_out=True, source="synthetic")

    cached = read_held_out([sample(["6", "L"]), sample(["L", "1"]), sample(["2", "5"]), sample(["C", "cocked"])], NoDice())
    assert [label.faces for _, _, _, label, _, _ in cached] == [("L", "dot"), ("2", "5"), ("C", "cocked")]
    assert [kind for *_, kind, _ in cached] == ["wild", "pip", "wild"]


def test_held_out_renders_are_read_as_the_kind_of_dice_they_were_rendered_with():
    """Found in the twenty-second session: the kind was guessed from the faces, so an LCR render whose dice
    all showed dots was read as pip dice, every LCR render as Wild dice, and a mixed render whose pip die
    showed a one beside LCR dots was kept. Each render now carries its kind (the renderer's kinds take
    turns, :func:`~lcr_pi.vision.training.scene_kind`)."""
    from lcr_pi.vision.training import Sample, read_held_out, scene_kind

    class NoDice:
        settings = ReaderSettings(tta_rotations=2)
        _classifier = None

        def find_dice(self, image, doubt=None):
            return []

    def render(faces, index):
        n = len(faces)
        return Sample(np.zeros((48, 64, 3), np.uint8), [(10.0 + 20 * i, 10.0) for i in range(n)], [(8.0, 8.0)] * n,
                      [0.0] * n, list(faces), held_out=True, source="synthetic", extra={"kind": scene_kind(index)})

    # Scenes 0-3 are pip, LCR, Wild and mixed dice, and so on.
    frames = [render(["1", "6"], 0), render(["1", "1"], 1), render(["L", "1"], 5), render(["W", "C"], 2),
              render(["1", "L"], 3), render(["2", "cocked"], 7)]
    cached = read_held_out(frames, NoDice())
    assert [(label.faces, kind) for _, _, _, label, kind, _ in cached] == [
        (("1", "6"), "pip"), (("dot", "dot"), "lcr"), (("L", "dot"), "lcr"), (("W", "C"), "wild")]


def test_a_die_too_many_may_be_left_to_the_referees_count():
    """A frame read sure with a die too many is wrong, but at the table the referee's count of the dice
    against the player's chips asks about it: with ``max_silent_any`` the strict bound covers only
    wrong reads with the right number of dice, and the looser one all of them."""
    def extra_find(confidence, group):
        dets, (probs, _), shape, label, kind, g = _frame("3", 0.99, "3", group)
        extra = np.zeros(len(CLASSES), np.float32)
        extra[CLASSES.index("5")], extra[CLASSES.index("background")] = confidence, 1 - confidence
        both = np.vstack([probs, extra[None]])
        return dets + [Detection(300.0, 100.0, 40.0, 40.0, 0.0, 0.9)], (both, both), shape, label, kind, g

    cached = [_frame("3", c, "3", g) for g in ("real", "synthetic") for c in (0.92, 0.96, 0.98, 0.99) for _ in range(3)]
    cached += [extra_find(0.94, g) for g in ("real", "synthetic")]
    floor = {"min_confidence": 0.9}  # under the default floor, so that the bounds decide
    assert choose_settings(cached, ReaderSettings(), max_silent=0.0, **floor).sure_confidence == 0.95
    assert choose_settings(cached, ReaderSettings(), max_silent=0.0, max_silent_any=0.1, **floor).sure_confidence == 0.9
    # ...but not beyond the looser bound (1 frame in 13 is 7.7 %).
    assert choose_settings(cached, ReaderSettings(), max_silent=0.0, max_silent_any=0.05, **floor).sure_confidence == 0.95


def test_an_exported_network_read_back_computes_what_the_shipped_file_computes():
    """``--classifier-init models/dice_faces.onnx`` and ``--detector-init`` continue from the exported
    weights (batch norms folded into the convolutions). Needs the training extra (torch, onnx);
    without it there is nothing to continue training with, and the test is skipped, saying so."""
    import pytest

    torch = pytest.importorskip("torch", reason="the training extra (pip install -e '.[train]') is not installed")
    pytest.importorskip("onnx", reason="the training extra (pip install -e '.[train]') is not installed")
    from pathlib import Path

    import cv2

    from lcr_pi.vision.training import _build_classifier, _build_detector, load_exported

    models = Path(__file__).resolve().parents[2] / "models"
    rng = np.random.default_rng(0)
    for build, name, shape in ((_build_classifier, "dice_faces.onnx", (3, 3, 48, 48)),
                               (_build_detector, "dice_detector.onnx", (1, 3, 64, 96))):
        model = build()
        load_exported(model, models / name)
        model.eval()
        x = rng.random(shape).astype(np.float32)
        net = cv2.dnn.readNetFromONNX(str(models / name))
        net.setInput(x)
        with torch.no_grad():
            assert np.abs(net.forward() - model(torch.from_numpy(x)).numpy()).max() < 1e-4, name
    # A file of another network is refused, naming the file.
    with pytest.raises(ValueError, match="dice_detector.onnx"):
        load_exported(_build_classifier(), models / "dice_detector.onnx")


def test_training_reads_the_train_photos_with_their_label_corrections():
    """A die the published labels leave out (or misname) would teach the models wrong: its top face
    as "no die" and its crop as background, and calibration would count the reader's right answer as
    a die too many. ``load_real`` applies ``benchmarks/label_corrections.json`` (the train entries)."""
    from pathlib import Path

    import pytest

    from lcr_pi.vision.training import DEFAULT_CORRECTIONS, load_real

    data = Path(__file__).resolve().parents[2].parent / "shared" / "data"
    if not (data / "nell-byler-d6" / "train").is_dir():
        pytest.skip("the real photo sets are not in ../shared/data")
    published = {id(s): s for s in load_real(data)}
    corrected = load_real(data, DEFAULT_CORRECTIONS)
    assert len(published) == len(corrected)
    changed = [(old, new) for old, new in zip(published.values(), corrected) if old.faces != new.faces]
    # 2026-12-05: three dice left out (two 6s and a 3) and four misnamed, in six photos.
    assert len(changed) == 6
    assert sum(len(new.faces) - len(old.faces) for old, new in changed) == 3
    assert sum(a != b for old, new in changed for a, b in zip(old.faces, new.faces)) == 4
    # The photo held out for calibration that no candidate reader could read "right": both its errors fixed.
    held = [(old, new) for old, new in changed if new.held_out]
    assert [(sorted(old.faces).count("3"), sorted(new.faces).count("3")) for old, new in held] == [(3, 5)]


def test_an_ensemble_of_classifiers_is_one_network_computing_the_mean_of_their_logits(tmp_path):
    """``python -m lcr_pi.vision.training ensemble --members A.pt B.pt`` exports one ``dice_faces.onnx``
    that OpenCV runs as any classifier; it computes the mean of the members' logits. Fewer than two
    members, or a file that is not a classifier's weights, is refused, naming it. Needs the training
    extra (torch, onnx); skipped without it, saying so."""
    import pytest

    torch = pytest.importorskip("torch", reason="the training extra (pip install -e '.[train]') is not installed")
    pytest.importorskip("onnx", reason="the training extra (pip install -e '.[train]') is not installed")
    import cv2

    from lcr_pi.vision.training import _build_classifier, main

    torch.manual_seed(0)
    nets, paths = [], []
    for i in range(2):
        net = _build_classifier().eval()
        for norm in (m for m in net.modules() if isinstance(m, torch.nn.BatchNorm2d)):
            norm.running_mean.uniform_(-0.5, 0.5)  # fitted norms, as trained ones have: not the identity
            norm.running_var.uniform_(0.5, 2.0)
        paths.append(tmp_path / f"member{i}.pt")
        torch.save(net.state_dict(), paths[-1])
        nets.append(net)
    assert main(["ensemble", "--out", str(tmp_path / "out"), "--members", *map(str, paths)]) == 0
    x = np.random.default_rng(1).random((5, 3, 48, 48)).astype(np.float32)
    net = cv2.dnn.readNetFromONNX(str(tmp_path / "out" / "dice_faces.onnx"))
    net.setInput(x)
    with torch.no_grad():
        mean = sum(n(torch.from_numpy(x)) for n in nets).numpy() / 2
        assert np.abs(mean - nets[0](torch.from_numpy(x)).numpy()).max() > 1e-3  # the members differ
    assert np.abs(net.forward() - mean).max() < 1e-4
    with pytest.raises(SystemExit, match="at least two"):
        main(["ensemble", "--out", str(tmp_path / "one"), "--members", str(paths[0])])
    (tmp_path / "notes.txt").write_text("not weights")
    with pytest.raises(SystemExit, match="notes.txt is not a face classifier"):
        main(["ensemble", "--out", str(tmp_path / "bad"), "--members", str(paths[0]), str(tmp_path / "notes.txt")])
