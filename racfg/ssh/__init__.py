"""racfg's own SSH, one layer for every session it opens itself (Ansible brings its own OpenSSH).

One host-key policy for hosts and switches alike (issue 51's known_hosts rules): ``known_hosts``
holds which files a target's key may be found in and what they say; ``hostkeys`` judges the key a
target presents (paramiko's policy for host sessions, the key pinned for netmiko's switch sessions);
``host_sessions`` is the one connection per host that validate, smoke, the site lock and deploy's
module checks share; ``channels`` are the channels on it that the site lock talks through (a
command read to its end, a holding shell kept open for its heartbeat); ``reach`` says what a person
does when a login fails. Switch sessions (netmiko, with a driver per platform) live with the switches
(racfg.switches.session) and take their key check here. paramiko is imported here alone
(tests/structure/test_ssh_layer.py).
"""
