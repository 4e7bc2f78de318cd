"""lcr-pi: a Raspberry Pi referee for Left Center Right."""

__version__ = "0.1.0"
