"""racfg_template: ``ansible.builtin.template``'s lookup itself, given the host's variables as a view
it can copy for nothing.

Why: the builtin lookup deep-copies all of the host's variables for each file it renders (its own
FIXME asks for "a chainmap with a sacrificial bottom layer" instead). The common role's probe renders
every file the roles write (chrony, lldpd, the /etc/hosts block, the data NICs' network files) on
every run, so on a large site those copies, each as big as the inventory, were most of a no-change
deploy's controller CPU (bench/RESULTS.md). A template only reads its variables, so this lookup
hands the builtin one a layered view whose deep copy is a new empty layer over the same variables:
the builtin's own code finds, reads and renders the file, with its own options and its own
behaviour on each ansible-core version (2.16-2.18: ``convert_data``, ``jinja2_native``; 2.19 and
later: trusted template text, no top-level finalisation), so the text is the builtin's, byte for
byte (tests/roles/test_racfg_template.py). Only public API: the builtin lookup subclassed, and
``copy.deepcopy``'s documented ``__deepcopy__`` hook. Should a later ansible-core stop copying, or
copy another way, the view is still a correct mapping of the same variables: only the saving goes.

What the copy protected and the view does not: a template that changed a host variable in place
(``{% set _ = some_list.append(x) %}``) would change it for the host's later tasks too. The roles'
templates never do (they only read); a template that must, builds its own list.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Mapping
from typing import Any

from ansible.plugins.lookup.template import LookupModule as TemplateLookup

# The builtin's options (the union over ansible-core 2.16-2.21; each version reads only its own):
# the plugin loader reads a plugin's options from its own file, so they are declared here again.
DOCUMENTATION = """
name: racfg_template
short_description: ansible.builtin.template's lookup, without its copy of the host's variables
description:
  - The text of each template file, rendered with the host's variables and O(template_vars) over them,
    by ansible.builtin.template's lookup itself; only the deep copy of every host variable it makes per
    file is spared (the variables are handed to it as a layered view).
options:
  _terms:
    description: template files, found as ansible.builtin.template finds them (the role's templates/)
  template_vars:
    description: variables the template sees over the host's
    type: dict
    default: {}
  convert_data:
    description:
      - ansible-core 2.16-2.18 only (2.19 and later never convert); whether the rendered text is converted
        to data. Off here (the builtin's default is on), so the text is what the template module writes.
    type: bool
    default: false
  jinja2_native:
    description: ansible-core 2.16-2.18 only; Jinja2's native types
    type: bool
    default: false
  variable_start_string:
    description: the string marking the beginning of a print statement
    type: str
    default: '{{'
  variable_end_string:
    description: the string marking the end of a print statement
    type: str
    default: '}}'
  comment_start_string:
    description: the string marking the beginning of a comment
    type: str
    default: '{#'
  comment_end_string:
    description: the string marking the end of a comment
    type: str
    default: '#}'
  trim_blocks:
    description: whether the first newline after a block is removed
    type: bool
    default: true
"""


class SharedVariables(ChainMap):
    """The host's variables, read through; a deep copy is a new empty layer over the same variables,
    so what the builtin lookup adds to its copy (the template_* variables, ``template_vars``) never
    reaches the host's."""

    def __deepcopy__(self, memo: dict[int, Any]) -> ChainMap:
        return ChainMap({}, *self.maps)


class LookupModule(TemplateLookup):
    def run(self, terms: list[str], variables: Mapping[str, Any] | None = None, **kwargs: Any) -> list[str]:
        return super().run(terms, variables=SharedVariables(variables or {}), **kwargs)
