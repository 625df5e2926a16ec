// The investigator's Decision (fenced): a USED edge to every playbook it considered, with the
// path of recall, trust at use, each check's result, whether it applied and whether it steered
// the diagnosis. The verdict is added later by the learner. Idempotent per task.
MATCH (t:Task {id: $task_id})-[:FOR]->(i:Incident)
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = $epoch AND t.lease_until >= timestamp()
MERGE (d:Decision {id: $decision_id})
  ON CREATE SET d.incident_id = i.id, d.at = timestamp(), d.planner = $planner
MERGE (i)-[:HAS_DECISION]->(d)
WITH d
UNWIND $used AS u
MATCH (pb:Playbook {id: u.playbook})
MERGE (d)-[e:USED]->(pb)
SET e.path = u.path, e.candidate = u.candidate, e.trust_at_use = u.trust,
    e.checks_json = u.checks_json, e.applicable = u.applicable, e.steered = u.steered,
    e.weight = u.weight
RETURN count(e) AS used
