"""racfg: one declarative inventory -> a deployed, validated AI reference-architecture cluster."""

__version__ = "0.1.0"
