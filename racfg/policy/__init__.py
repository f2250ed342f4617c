"""RA rules over an inventory: findings (error | warning) with paths, and the bandwidth budget."""

from racfg.policy.budget import BandwidthBudget, bandwidth_budget
from racfg.policy.findings import Finding
from racfg.policy.rules import RULES, evaluate

__all__ = ["RULES", "BandwidthBudget", "Finding", "bandwidth_budget", "evaluate"]
