"""The emulated Arista EOS: grammar, show output formats and eAPI."""
