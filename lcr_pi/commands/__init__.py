"""Subcommands of ``lcr-pi``; see :mod:`lcr_pi.cli` for the protocol each module follows."""
