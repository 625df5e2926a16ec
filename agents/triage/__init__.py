"""Triage (no model): accepted alerts become Alert nodes, incidents and investigate tasks."""
