"""Agents that work from the graph: triage, investigator, responder (and their coordination)."""
