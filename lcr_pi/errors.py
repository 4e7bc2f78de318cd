"""Errors that carry a message meant for a person at the table or at the keyboard."""


class UserError(Exception):
    """Bad input from a person: the message names the problem (which key, file, die, player)."""
