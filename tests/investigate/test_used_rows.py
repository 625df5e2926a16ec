"""The one USED row per playbook a Decision keeps (`investigator.one_per_playbook`): a
playbook recalled for its own cause and, by kind transfer, for another component is checked
for each, and its one USED edge must say which of them steered."""

from __future__ import annotations

from agents.investigate.investigator import one_per_playbook


def test_a_decision_keeps_one_used_row_per_playbook_the_one_that_steered():
    used = [
        {"playbook": "pb", "candidate": "zeta-db", "applicable": False, "steered": False},
        {"playbook": "pb", "candidate": "alpha-db", "applicable": True, "steered": True},
        {"playbook": "other", "candidate": "db", "applicable": False, "steered": False},
        {"playbook": "other", "candidate": "db2", "applicable": False, "steered": False},
    ]
    assert [(u["playbook"], u["candidate"]) for u in one_per_playbook(used)] == [
        ("pb", "alpha-db"),
        ("other", "db"),
    ]
