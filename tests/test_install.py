"""What an installed copy (not only this source tree) needs: the reader's model files."""

from __future__ import annotations

import tomllib
from importlib.metadata import PackagePath
from pathlib import Path

from lcr_pi.doctor import OPTIONAL_MODELS, REQUIRED_MODELS
from lcr_pi.vision.reader import DEFAULT_MODELS, _shipped_models

REPO = Path(__file__).resolve().parents[1]


def test_the_source_tree_reads_its_own_models():
    assert DEFAULT_MODELS == REPO / "models"


def test_an_installed_wheel_finds_the_models_pip_put_in_share(tmp_path):
    # Found by an audit: after `pip install .` (not -e) the reader looked in site-packages/models, which
    # no install makes, and `lcr-pi demo` stopped with "missing model file".
    prefix = tmp_path / "venv"
    site = prefix / "lib" / "python3.11" / "site-packages"
    models = prefix / "share" / "lcr-pi" / "models"
    models.mkdir(parents=True)
    (models / "reader.json").write_text("{}")

    class Dist:
        def locate_file(self, path):
            return site / path

    def record(path):
        entry = PackagePath(path)
        entry.dist = Dist()
        return entry

    installed = [record("lcr_pi/__init__.py"), record("../../../share/lcr-pi/models/reader.json")]
    assert _shipped_models(site / "models", installed) == models.resolve()
    assert _shipped_models(site / "models", []) == site / "models"  # none: the error names where it looked


def test_the_wheel_carries_every_model_file_the_reader_loads():
    data_files = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["data-files"]
    shipped = {path.name for pattern in data_files["share/lcr-pi/models"] for path in REPO.glob(pattern)}
    assert {*REQUIRED_MODELS, *OPTIONAL_MODELS, "reader.json"} <= shipped
