"""The `action_id`s of every button we put on a Slack message, declared once.

The page's buttons carry the incident id as `value`; a preference read back carries the fact
id. `gateway.http.slack_routes` dispatches a click by these ids from one table.
"""

from __future__ import annotations

CONFIRM = "blast_confirm"
REJECT = "blast_reject"
RESOLVED = "blast_resolved"
ACKNOWLEDGE = "blast_ack"
#: "Snooze 1 h": a quiet window over the incident's components (not a verdict).
SNOOZE = "blast_snooze"
APPROVE_PREFERENCE = "approve_preference"
DISCARD_PREFERENCE = "discard_preference"
#: A proposed remediation's buttons (value = the remediation id).
APPROVE_REMEDIATION = "remediation_approve"
REJECT_REMEDIATION = "remediation_reject"

#: A page's verdict button -> the verdict it records.
VERDICTS = {CONFIRM: "confirmed", REJECT: "rejected", RESOLVED: "resolved"}
