"""``lcr-pi doctor``: check the camera, speech, each LED and button, the files and the disk."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from lcr_pi.doctor import DoctorRig, check_settings, format_report, run_doctor
from lcr_pi.settings import load_settings

HELP = "check the table's hardware and files: camera, speech, LEDs, buttons, calibration, models, disk"

#: The settings file the service uses; the doctor checks it when no --config is given.
SERVICE_CONFIG = Path("/etc/lcr-pi/lcr-pi.toml")


def add_arguments(parser) -> None:
    parser.add_argument("--config", help=f"settings file (TOML); default: {SERVICE_CONFIG} when it exists")
    parser.add_argument("--skip-buttons", action="store_true", help="do not wait for button presses")
    parser.add_argument("--camera", help="camera source to check instead of the settings' one: auto, picamera2, "
                                         "webcam:N, a video file or a folder of frames")
    parser.add_argument("--state-dir", help="state folder to check instead of the settings' one")
    parser.add_argument("--button-timeout", type=float, default=15.0, metavar="SECONDS",
                        help="how long to wait for each button press (default 15)")
    parser.add_argument("--calibration", help="calibration file (default: reader.calibration in the settings, "
                                              "else calibration/table.json)")


def run(args) -> int:
    config = args.config
    if config is None and SERVICE_CONFIG.is_file():
        config = SERVICE_CONFIG
    settings, settings_check = check_settings(config, load_settings)
    if args.state_dir:
        settings = replace(settings, storage=replace(settings.storage, state_dir=args.state_dir))
    rig = DoctorRig(button_timeout_s=args.button_timeout,
                    calibration=Path(args.calibration) if args.calibration else None)
    checks = run_doctor(settings, rig, camera=args.camera, skip_buttons=args.skip_buttons, first=[settings_check])
    print()
    print(format_report(checks))
    return 1 if any(c.status == "FAIL" for c in checks) else 0
