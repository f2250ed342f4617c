#!/usr/bin/python
"""Read the release of a MLNX_OFED tarball at a URL, on the host, writing nothing.

The ofed role must refuse a tarball of another release than the pin before it changes the host.
A file name can lie (a renamed or mislabelled download), and what it unpacks to is only known
after unpacking, which already changes the host. So the host streams the tarball through
``tarfile`` in stream mode, takes the distribution directory (the first member's top directory)
and, when the vendor's ``<dir>/.mlnx`` file comes by, the release it states; nothing is stored.
Reading stops at ``.mlnx``. This runs on the host, without racfg, so the directory-name pattern is
kept here (racfg.hostfacts.ofed has the same grammar for the controller's side).
"""

from __future__ import annotations

import re
import tarfile
from typing import IO

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.urls import open_url

DOCUMENTATION = r"""
module: racfg_ofed_tarball
short_description: Read the release a MLNX_OFED tarball at a URL holds, writing nothing
description:
  - Streams the tarball and returns its distribution directory and release (the .mlnx file, else
    the directory's name). Read-only; runs under check mode.
options:
  url:
    description: http(s) URL of a MLNX_OFED_LINUX-<release>-<os>-<arch>.tgz.
    type: str
    required: true
  timeout:
    description: Seconds to wait for the server.
    type: int
    default: 60
author: racfg
"""

RETURN = r"""
top: {description: the directory the tarball unpacks to, type: str, returned: success}
release: {description: "the release it holds, '' when it tells none", type: str, returned: success}
read_from: {description: ".mlnx, or name (the directory's name) when it has no .mlnx", type: str, returned: success}
"""

_RELEASE_IN_NAME = re.compile(r"MLNX_OFED_LINUX-(\d+\.\d+-\d+(?:\.\d+)*)(?:-|$)")


def read_release(stream: IO[bytes]) -> dict[str, str]:
    """{top, release, read_from} of the gzipped (or plain) tar read from ``stream``."""
    top = ""
    with tarfile.open(fileobj=stream, mode="r|*") as archive:
        for member in archive:
            parts = [p for p in member.name.split("/") if p not in ("", ".")]
            if not parts:
                continue
            top = top or parts[0]
            if parts[0] == top and parts[1:] == [".mlnx"] and member.isfile():
                content = archive.extractfile(member)
                release = content.read(200).decode(errors="replace").strip() if content else ""
                return {"top": top, "release": release, "read_from": ".mlnx"}
    if not top:
        raise ValueError("the archive is empty")
    match = _RELEASE_IN_NAME.match(top)
    return {"top": top, "release": match.group(1) if match else "", "read_from": "name"}


def main() -> None:
    module = AnsibleModule(argument_spec={"url": {"type": "str", "required": True},
                                          "timeout": {"type": "int", "default": 60}},
                           supports_check_mode=True)
    url = module.params["url"]
    try:
        response = open_url(url, timeout=module.params["timeout"])
        found = read_release(response)
    except (tarfile.TarError, ValueError, EOFError) as exc:
        module.fail_json(msg=f"MLNX_OFED tarball {url} is not a readable tar archive: {exc}")
    except Exception as exc:  # every download failure (HTTP, DNS, refused, TLS) is one answer
        module.fail_json(msg=f"MLNX_OFED tarball {url} cannot be read from this host: {exc}")
    module.exit_json(changed=False, **found)


if __name__ == "__main__":
    main()
