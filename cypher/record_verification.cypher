// The verifier's outcome for a remediation (fenced by the `verify_remediation` task's lease):
// one Verification {outcome: verified|failed|unknown, at, detail}; the remediation ends
// 'succeeded', 'failed' or 'unknown'; and the playbook's remediation trust moves as its
// helpfulness trust does, (verified + 1) / (verified + failed + 2). 'unknown' moves nothing.
// A failed one retriggers its incident while it is open, as PagerDuty retriggers an
// acknowledged incident: the acknowledgement is cleared (nobody is on it: the fix they
// approved did not work) and `retriggers`/`retriggered_at` count it, so the escalation policy
// runs again from now (`agents/respond/escalation.py`).
// A repeat (a retried task) finds the Verification and changes nothing (`fresh` false).
MATCH (t:Task {id: $task_id})
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = $epoch AND t.lease_until >= timestamp()
MATCH (r:Remediation {id: $remediation_id})
OPTIONAL MATCH (r)-[:VERIFIED]->(old:Verification)
WITH r, old IS NULL AS fresh
FOREACH (_ IN CASE WHEN fresh THEN [1] ELSE [] END |
  CREATE (r)-[:VERIFIED]->(:Verification {outcome: $outcome, at: timestamp(), detail: $detail})
  SET r.status = CASE $outcome WHEN 'verified' THEN 'succeeded' ELSE $outcome END)
WITH r, fresh
OPTIONAL MATCH (pb:Playbook {id: r.playbook_id})
WITH r, fresh, pb,
     coalesce(pb.remediation_verified, 0) + CASE WHEN $outcome = 'verified' THEN 1 ELSE 0 END AS verified,
     coalesce(pb.remediation_failed, 0) + CASE WHEN $outcome = 'failed' THEN 1 ELSE 0 END AS failed
FOREACH (_ IN CASE WHEN fresh AND pb IS NOT NULL AND $outcome <> 'unknown' THEN [1] ELSE [] END |
  SET pb.remediation_verified = verified, pb.remediation_failed = failed,
      pb.remediation_trust = toFloat(verified + 1) / (verified + failed + 2))
WITH r, fresh
MATCH (i:Incident)-[:HAS_REMEDIATION]->(r)
FOREACH (_ IN CASE WHEN fresh AND $outcome = 'failed' AND i.status = 'open' THEN [1] ELSE [] END |
  SET i.acknowledged_at = null, i.acknowledged_by = null,
      i.retriggers = coalesce(i.retriggers, 0) + 1, i.retriggered_at = timestamp())
WITH r, fresh, i
MATCH (r)-[:VERIFIED]->(v:Verification)
RETURN v.outcome AS outcome, v.detail AS detail, fresh, r.status AS status
