"""Acting on the world: a remediation proposed from a playbook whose checks held, approved by a
verified person of the owning team, run once per intent, and verified independently.

Off unless `BLAST_ACTIONS_ENABLED` is true. The proposal itself is written with the
investigator's Decision (`cypher/record_decision.cypher`: the steering playbook's remediation,
no extra round trip). Modules: `spec` (what a playbook may carry), `notices` (what is said in
the thread and on the ticket), `approval` (who may approve, and the decision node), `run` (the
one dispatch, with reconciliation and Attempt nodes), `verify` (the independent check
afterwards), `actor` (the agent that runs the three task kinds below).

Task kinds (declared in `agents.tasks.kinds`): `propose_remediation` (tell the thread what is
proposed; waits for the first page), `edit_proposal` (enqueued by an approval or a rejection:
the proposal's message edited once to say who decided, its buttons gone), `remediate`
(enqueued by an approval), and `verify_remediation` (enqueued by the run; pauses until the
evidence answers or `verify_within` is over).
"""

from __future__ import annotations
