"""What the emulated CLI's command handlers raise (shared by the engine and its command groups)."""


class CliError(Exception):
    """A command the switch refuses; the message is printed as the switch prints it."""
