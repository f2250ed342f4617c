"""The emulated switch CLI answers every line netmiko types while logging in, as the real switch does.

netmiko's session preparation and enable wait for an answer to each line they type (a prompt, or a
text such as EOS's "Width set to"); a CLI that does not answer one makes every login wait for
netmiko's read timeout. The lines are recorded from a real racfg login (netmiko's own drivers, so a
new netmiko that types something else shows up here), then typed again over a plain SSH shell to the
emulated switch: each must be answered at once with the real switch's output and prompt.
"""

from __future__ import annotations

import paramiko
import pytest

from racfg.switches import SwitchTarget
from racfg.switches.session import SwitchSession
from tests.switches.conftest import PASSWORD

# The real prompts of host sw1 (Onyx and MLNX-OS: "<host> [standalone: master] > ", EOS: "<host>>").
PROMPTS = {
    "onyx": {"user": "sw1 [standalone: master] > ", "enable": "sw1 [standalone: master] # "},
    "mlnxos-ib": {"user": "sw1 [standalone: master] > ", "enable": "sw1 [standalone: master] # "},
    "eos": {"user": "sw1>", "enable": "sw1#"},
}
# What the real switch prints for each line netmiko types at login, and the mode it is in after.
ANSWERS: dict[str, dict[str, tuple[str, str | None]]] = {
    "onyx": {"": ("", None), "no cli session paging enable": ("", None), "enable": ("", "enable")},
    "mlnxos-ib": {"": ("", None), "no cli session paging enable": ("", None), "enable": ("", "enable")},
    "eos": {"": ("", None), "terminal width 511": ("Width set to 511 columns.", None),
            "terminal length 0": ("Pagination disabled.", None), "enable": ("", "enable")},
}


def typed_at_login(sw, monkeypatch) -> list[str]:
    """The lines netmiko types into the channel while racfg logs in (connection, preparation, enable)."""
    from netmiko.base_connection import BaseConnection

    sent: list[str] = []
    write = BaseConnection.write_channel

    def record(self: BaseConnection, out_data: str) -> None:
        sent.append(out_data)
        write(self, out_data)

    with monkeypatch.context() as login:
        login.setattr(BaseConnection, "write_channel", record)
        session = SwitchSession(SwitchTarget("sw1", sw.platform, "127.0.0.1", sw.port, "admin", PASSWORD, timeout=5,
                                             known_hosts=sw.known_hosts))
        session.open()
    session.close()
    return "".join(sent).replace("\r\n", "\n").replace("\r", "\n").split("\n")[:-1]


def read_to(chan: paramiko.Channel, ending: str) -> str:
    """What the switch prints until it shows ``ending`` (and stops printing), or what came before it went quiet."""
    data = ""
    while not data.endswith(ending):
        try:
            chunk = chan.recv(65536)
        except TimeoutError:
            break
        if not chunk:
            break
        data += chunk.decode()
    return data


@pytest.mark.parametrize("platform", ["onyx", "mlnxos-ib", "eos"])
def test_lab_cli_answers_each_login_line_with_the_real_prompt(switch_factory, platform, monkeypatch):
    sw = switch_factory(platform)
    lines = typed_at_login(sw, monkeypatch)
    unknown = sorted({line for line in lines if line not in ANSWERS[platform]})
    assert not unknown, f"netmiko now types {unknown} at a {platform} login: add what the real switch answers"
    assert "enable" in lines

    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())  # the test's own switch on 127.0.0.1
    client.connect("127.0.0.1", sw.port, "admin", PASSWORD, allow_agent=False, look_for_keys=False, timeout=5)
    try:
        chan = client.invoke_shell()
        chan.settimeout(5)  # an answer that has not come by then is one the CLI does not give
        mode = "user"
        assert read_to(chan, PROMPTS[platform][mode]).endswith(PROMPTS[platform][mode])
        for line in lines:
            output, after = ANSWERS[platform][line]
            mode = after or mode
            chan.send((line + "\n").encode())
            want = line + "\r\n" + (output + "\r\n" if output else "") + PROMPTS[platform][mode]
            assert read_to(chan, want) == want, f"{platform} answer to {line!r}"
    finally:
        client.close()
