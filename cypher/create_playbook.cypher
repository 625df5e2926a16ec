// Learn a playbook (fenced; idempotent by id): pinned to the confirmed root cause, with its
// failure kind and the checks that held, linked to the incident, finding and verdict it came
// from, and who gave that verdict (`confirmed_by`: their name, else their Slack id; cited when memory names the cause again).
// Memory is never edited in place: a new version SUPERSEDES the old, which stops being
// recalled (status 'superseded'); both stay. The new version keeps the remediation of the
// one it supersedes (what to run is a person's choice; the learner only learns checks).
MATCH (t:Task {id: $task_id})
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = $epoch AND t.lease_until >= timestamp()
MATCH (c:Component {name: $component})
MATCH (i:Incident {id: $incident_id})-[:HAS_VERDICT]->(v:Verdict {id: $verdict_id})
OPTIONAL MATCH (who:Person {slack_user_id: v.by})
WITH c, i, v, head(collect(who.name)) AS who
MERGE (pb:Playbook {id: $id})
  ON CREATE SET pb.title = $title, pb.failure_kind = $failure_kind, pb.tech = c.tech,
    pb.checks_json = $checks_json, pb.helped = 0, pb.misled = 0, pb.trust = 0.5,
    pb.status = 'active', pb.created_at = timestamp(), pb.learned_from = i.id,
    pb.learned_at = i.opened_at, pb.confirmed_by = coalesce(v.by_name, who, v.by)
MERGE (pb)-[:PINNED_TO]->(c)
MERGE (pb)-[:LEARNED_FROM]->(i)
MERGE (pb)-[:LEARNED_FROM]->(v)
WITH pb, i
OPTIONAL MATCH (i)-[:HAS_FINDING]->(f:Finding)
FOREACH (_ IN CASE WHEN f IS NULL THEN [] ELSE [1] END | MERGE (pb)-[:LEARNED_FROM]->(f))
WITH pb
OPTIONAL MATCH (old:Playbook {id: $supersedes})
FOREACH (_ IN CASE WHEN old IS NULL THEN [] ELSE [1] END |
  MERGE (pb)-[:SUPERSEDES]->(old)
  SET old.status = 'superseded', pb.remediation_json = coalesce(pb.remediation_json, old.remediation_json),
    pb.remediation_type = coalesce(pb.remediation_type, old.remediation_type))
RETURN pb.id AS id, pb.trust AS trust
