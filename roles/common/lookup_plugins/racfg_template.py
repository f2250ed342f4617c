"""racfg_template: a template file rendered as ``ansible.builtin.template`` renders it, without first
copying every variable of the host.

Why: the builtin lookup deep-copies all of the host's variables for each file it renders (its own
FIXME asks for a layered view instead). The common role's probe renders every file the roles write
(chrony, lldpd, the /etc/hosts block, the data NICs' network files) on every run, so on a large
site those copies, each as big as the inventory, were most of a no-change deploy's controller CPU
(bench/RESULTS.md). A template only reads its variables: a layered view (``template_vars`` over
the host's variables) renders the same text.
"""

from __future__ import annotations

import os
from collections import ChainMap
from typing import Any

from ansible.errors import AnsibleError
from ansible.plugins.lookup import LookupBase

DOCUMENTATION = """
name: racfg_template
short_description: render a template file, without copying the host's variables
description:
  - The text of each template file, rendered with the host's variables and O(template_vars) over them,
    as ansible.builtin.template renders it.
options:
  _terms:
    description: template files, found as ansible.builtin.template finds them (the role's templates/)
  template_vars:
    description: variables the template sees over the host's
    type: dict
    default: {}
"""


class LookupModule(LookupBase):
    def run(self, terms: list[str], variables: dict[str, Any] | None = None, **kwargs: Any) -> list[str]:
        self.set_options(var_options=variables, direct=kwargs)
        variables = variables or {}
        own = dict(self.get_option("template_vars") or {})
        return [self._render(term, variables, own) for term in terms]

    def _render(self, term: str, variables: dict[str, Any], own: dict[str, Any]) -> str:
        path = self.find_file_in_search_path(variables, "templates", term)
        if not path:
            raise AnsibleError(f"racfg_template: the template file {term} could not be found")
        search = [os.path.dirname(path)]
        for directory in variables.get("ansible_search_path", []):
            search += [os.path.join(directory, "templates"), directory]
        try:  # ansible-core 2.19 and later: trusted template text, the engine without top-level finalisation
            from ansible._internal._templating._engine import TemplateOptions
            from ansible._internal._templating._template_vars import generate_ansible_template_vars
            from ansible.template import trust_as_template
        except ImportError:  # 2.16 - 2.18
            from ansible.template import generate_ansible_template_vars as older_template_vars

            layered = ChainMap(own, older_template_vars(term, path), variables)
            templar = self._templar.copy_with_new_env(available_variables=layered, searchpath=search)
            text = self._loader._get_file_contents(path)[0].decode("utf-8")
            return templar.template(text, preserve_trailing_newlines=True, convert_data=False,
                                    escape_backslashes=False)
        generated = generate_ansible_template_vars(path=term, fullpath=path,
                                                   include_ansible_managed="ansible_managed" not in variables)
        templar = self._templar.copy_with_new_env(available_variables=ChainMap(own, generated, variables),
                                                  searchpath=search)
        text = trust_as_template(self._loader.get_text_file_contents(path))
        return templar._engine.template(text, options=TemplateOptions(escape_backslashes=False))
