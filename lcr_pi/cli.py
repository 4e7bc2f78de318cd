"""The ``lcr-pi`` command line.

Each subcommand lives in its own module under :mod:`lcr_pi.commands` and provides

* ``HELP``: one line for ``lcr-pi --help``;
* ``add_arguments(parser)``: its options;
* ``run(args) -> int``: the exit status.

Modules are discovered, so adding a command never means editing this file.
Errors meant for the user are raised as :class:`lcr_pi.errors.UserError` and printed as one
clear line (no traceback), with exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from lcr_pi import __version__
from lcr_pi.errors import UserError


def _command_modules():
    import lcr_pi.commands as package

    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        yield info.name.replace("_", "-"), importlib.import_module(f"{package.__name__}.{info.name}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lcr-pi",
        description="A Raspberry Pi referee for real games of Left Center Right.",
    )
    parser.add_argument("--version", action="version", version=f"lcr-pi {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module in _command_modules():
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    try:
        return int(args._run(args) or 0)
    except UserError as exc:
        print(f"lcr-pi {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Output piped into `head` and the like: stop quietly, as Unix tools do.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
