// The investigator's Decision (fenced): a USED edge to every playbook it considered, with the
// path of recall, trust at use, each check's result, whether it applied and whether it steered
// the diagnosis. The verdict is added later by the learner. Idempotent per task.
// $propose: the steering playbook (null when none steered): when it carries a remediation, the
// incident gets it as a proposed Remediation on $candidate (once per incident and playbook,
// whatever re-investigations follow) and a `propose_remediation` task that says so in the
// page's thread.
MATCH (t:Task {id: $task_id})-[:FOR]->(i:Incident)
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = $epoch AND t.lease_until >= timestamp()
MERGE (d:Decision {id: $decision_id})
  ON CREATE SET d.incident_id = i.id, d.at = timestamp(), d.planner = $planner
MERGE (i)-[:HAS_DECISION]->(d)
WITH d, i
UNWIND $used AS u
MATCH (pb:Playbook {id: u.playbook})
MERGE (d)-[e:USED]->(pb)
SET e.path = u.path, e.candidate = u.candidate, e.trust_at_use = u.trust,
    e.checks_json = u.checks_json, e.applicable = u.applicable, e.steered = u.steered,
    e.weight = u.weight
WITH i, count(e) AS used
// coalesce: an index lookup of null scans every Playbook.
OPTIONAL MATCH (pb:Playbook {id: coalesce($propose, '')})
WHERE pb.remediation_json IS NOT NULL AND $candidate IS NOT NULL
FOREACH (_ IN CASE WHEN pb IS NULL THEN [] ELSE [1] END |
  MERGE (r:Remediation {id: 'remediation:' + i.id + ':' + pb.id})
    ON CREATE SET r.playbook_id = pb.id, r.incident_id = i.id, r.type = pb.remediation_type,
      r.spec_json = pb.remediation_json, r.component = $candidate, r.status = 'proposed',
      r.proposed_at = timestamp(), r.intent_id = 'incident:' + i.id + ':remediate:' + pb.id
  MERGE (i)-[:HAS_REMEDIATION]->(r)
  MERGE (n:Task {id: 'propose:' + r.id})
    ON CREATE SET n += {kind: 'propose_remediation', incident_id: i.id, remediation_id: r.id,
// @include _fresh_task
}
  MERGE (n)-[:FOR]->(i))
RETURN used, pb IS NOT NULL AS proposed
