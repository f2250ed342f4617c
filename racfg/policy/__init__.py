"""RA rules over an inventory: findings (error | warning) with paths, and the bandwidth budget."""

from racfg.policy.budget import BandwidthBudget, bandwidth_budget
from racfg.policy.findings import Finding
from racfg.policy.rules import RULES, evaluate
from racfg.policy.storage_rules import WEKA_MIN_NODES  # registers the storage rules (after rules.py's own)
from racfg.policy.topology_rules import leaf_ratios  # registers the fabric-topology rules (after rules.py's own)

__all__ = ["RULES", "WEKA_MIN_NODES", "BandwidthBudget", "Finding", "bandwidth_budget", "evaluate", "leaf_ratios"]
