// A changed verdict withdraws what the earlier one taught (fenced; idempotent): the active
// playbooks learned from incident $incident_id whose id is not in $keep (the one this verdict
// teaches, if any) retire, saying why ($reason). A later verdict that teaches the same cause
// again makes the learner's `create_playbook` revive it. Only playbooks learned from verdicts
// (`learned_from`), never ones people wrote or imported; the version one of them superseded is
// active again. One row: `retired`, the ids.
MATCH (t:Task {id: $task_id})
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = $epoch AND t.lease_until >= timestamp()
OPTIONAL MATCH (pb:Playbook {learned_from: $incident_id})
WHERE pb.status = 'active' AND NOT pb.id IN $keep
// the version it superseded is memory's again: the lesson withdrawn widened or corrected it
OPTIONAL MATCH (pb)-[:SUPERSEDES]->(old:Playbook {status: 'superseded'})
FOREACH (p IN CASE WHEN pb IS NULL THEN [] ELSE [pb] END |
  SET p.status = 'retired', p.retired_at = timestamp(), p.retired_reason = $reason)
FOREACH (o IN CASE WHEN old IS NULL THEN [] ELSE [old] END | SET o.status = 'active')
RETURN collect(DISTINCT pb.id) AS retired
