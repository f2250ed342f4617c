"""The rendered variables reach Ansible as data: every string is written ``!unsafe``.

Ansible evaluates a variable's string as a Jinja template when a task reads it, so a value that
came from the inventory would be code if it held ``{{ ... }}`` (``lookup('pipe', ...)`` runs on the
controller). The schema refuses such values (racfg.inventory.inert); writing every string of
host_vars and group_vars with Ansible's ``!unsafe`` tag makes sure one that got past it anyway (an
edited rendered tree, a future field) is still never templated. Mapping keys stay plain: they are
never templated, and are constrained by the schema.

The few strings racfg itself means as templates are ``Template`` and stay plain. racfg's own
readers of a rendered tree load it with :func:`load_rendered` (a plain ``yaml.safe_load`` does not
know the tag); ``!unsafe`` strings read as ordinary strings there.
"""

from __future__ import annotations

from typing import Any

import yaml

UNSAFE_TAG = "!unsafe"


class Template(str):
    """A string racfg means as an Ansible template (e.g. ``{{ ansible_playbook_python }}``): left plain."""


class Unsafe(str):
    """A string written ``!unsafe``: Ansible passes it on as it is, never evaluating it."""


def mark_unsafe(data: Any) -> Any:
    """``data`` with every string value (not key) an ``Unsafe``, except those that are a ``Template``."""
    if isinstance(data, dict):
        return {key: mark_unsafe(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [mark_unsafe(value) for value in data]
    if isinstance(data, str) and not isinstance(data, (Template, Unsafe)):
        return Unsafe(data)
    return data


def add_representers(dumper: type[yaml.SafeDumper]) -> None:
    """Teach a dumper to write ``Unsafe`` with the tag and ``Template`` as a plain string."""
    dumper.add_representer(Unsafe, lambda d, value: d.represent_scalar(UNSAFE_TAG, str(value)))
    dumper.add_representer(Template, lambda d, value: d.represent_str(str(value)))


_BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class RenderedLoader(_BaseLoader):  # type: ignore[misc,valid-type]
    """Reads a rendered host_vars or group_vars file: ``!unsafe`` strings as plain strings."""


RenderedLoader.add_constructor(UNSAFE_TAG, lambda loader, node: loader.construct_scalar(node))


def load_rendered(text: str) -> Any:
    """A rendered variables file as plain data (what racfg's readers and tests compare)."""
    return yaml.load(text, Loader=RenderedLoader)  # a SafeLoader that knows one more tag


__all__ = ["UNSAFE_TAG", "RenderedLoader", "Template", "Unsafe", "add_representers", "load_rendered", "mark_unsafe"]
