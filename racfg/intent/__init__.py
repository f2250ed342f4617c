"""The intended site: the one model of what a site should be, built once from the loaded inventory.

``site_intent(cluster)`` turns a loaded site (racfg.inventory.cluster: hosts, NICs, addresses; its
switch graph racfg.inventory.topology: tiers, ISLs, leaf subnets, ASNs) into a SiteIntent: every
switch with its cabled ports, tier and routing (routed ISL ends, host subnets, BGP neighbours, ECMP
paths), every host's gateway and routes, and the figures checks expect (what each leaf's hosts can
send, the oversubscription ceiling). Render writes Ansible variables from it
(racfg.render.routing, racfg.render.ansible_inventory), the switch layer builds the state it enforces
from it (racfg.switches.intent), validate, drift and smoke judge against it
(racfg.validate.fabric_routing, racfg.drift.fabric_environment). Why one model: each of those once re-derived the
fabric on its own, some from the rendered variables, so two readings of one inventory could differ.

Modules: ``site_model`` (the dataclasses), ``build`` (the one builder, cached per Cluster) and
``fabric_outline`` (the fabric as plain data, for the report's picture).
"""

from racfg.intent.build import site_intent
from racfg.intent.site_model import CabledPort, HostRoute, HostRouting, IslEnd, SiteIntent, SwitchIntent, SwitchRouting

__all__ = ["CabledPort", "HostRoute", "HostRouting", "IslEnd", "SiteIntent", "SwitchIntent", "SwitchRouting",
           "site_intent"]
