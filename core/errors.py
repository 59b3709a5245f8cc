"""Errors that reach the user as one line and a non-zero exit."""


class UserError(Exception):
    """Bad input or a missing resource; the CLI prints the message alone and exits 2."""
