// Learn a playbook (fenced; idempotent by id): pinned to the confirmed root cause, with its
// failure kind and the checks that held, linked to the incident, finding and verdict it came
// from, and who gave that verdict (`confirmed_by`: their name, else their Slack id; cited when memory names the cause again)
// and whether it confirmed the finding or corrected it (`lesson`: confirmed | corrected).
// `upstream`: the lesson named a caller of what alerted (recalled from its callees);
// `corrected_from`: the cause the corrected finding had named (kept from the version it supersedes);
// `corrected_also`: those the versions it supersedes were corrected from, when other (a batch
// corrected on one database, then on another: both answers were wrong).
// Memory is never edited in place: a new version SUPERSEDES the old, which stops being
// recalled (status 'superseded'); both stay. The new version keeps the remediation of the
// one it supersedes (what to run is a person's choice; the learner only learns checks).
// Learned playbooks count against the tenant quota like written ones, checked in this same
// write (writes to a graph run one at a time): `kept` counts the playbooks not retired; a new
// id when `kept` >= $max_playbooks creates and supersedes nothing and answers `refused` true
// (id null). The verdict is already stored; an id already stored (a retry) is never refused.
// One retired because a changed verdict withdrew its lesson ($withdrawn, `withdraw_lessons`)
// is active again when a verdict teaches it once more.
MATCH (t:Task {id: $task_id})
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = $epoch AND t.lease_until >= timestamp()
MATCH (c:Component {name: $component})
MATCH (i:Incident {id: $incident_id})-[:HAS_VERDICT]->(v:Verdict {id: $verdict_id})
OPTIONAL MATCH (who:Person {slack_user_id: v.by})
WITH c, i, v, head(collect(who.name)) AS who
OPTIONAL MATCH (other:Playbook)
WHERE other.status <> 'retired'
WITH c, i, v, who, count(other) AS kept
OPTIONAL MATCH (mine:Playbook {id: $id})
WITH c, i, v, who, kept, mine IS NULL AND kept >= $max_playbooks AS refused
FOREACH (_ IN CASE WHEN refused THEN [] ELSE [1] END |
  MERGE (pb:Playbook {id: $id})
    ON CREATE SET pb.title = $title, pb.failure_kind = $failure_kind, pb.tech = c.tech,
      pb.checks_json = $checks_json, pb.helped = 0, pb.misled = 0, pb.trust = 0.5,
      pb.status = 'active', pb.created_at = timestamp(), pb.learned_from = i.id,
      pb.learned_at = i.opened_at, pb.confirmed_by = coalesce(v.by_name, who, v.by),
      pb.lesson = CASE v.verdict WHEN 'rejected' THEN 'corrected' ELSE 'confirmed' END,
      pb.upstream = $upstream, pb.corrected_from = $corrected_from
    ON MATCH SET pb.status = CASE WHEN pb.status = 'retired' AND pb.retired_reason = $withdrawn
                                  THEN 'active' ELSE pb.status END,
      pb.retired_reason = CASE WHEN pb.retired_reason = $withdrawn THEN null
                               ELSE pb.retired_reason END
  MERGE (pb)-[:PINNED_TO]->(c)
  MERGE (pb)-[:LEARNED_FROM]->(i)
  MERGE (pb)-[:LEARNED_FROM]->(v))
WITH i, kept, refused
OPTIONAL MATCH (pb:Playbook {id: $id})
OPTIONAL MATCH (i)-[:HAS_FINDING]->(f:Finding)
WITH pb, kept, refused, collect(f) AS findings
FOREACH (f IN CASE WHEN pb IS NULL THEN [] ELSE findings END | MERGE (pb)-[:LEARNED_FROM]->(f))
WITH pb, kept, refused
OPTIONAL MATCH (old:Playbook {id: $supersedes})
FOREACH (_ IN CASE WHEN old IS NULL OR pb IS NULL THEN [] ELSE [1] END |
  MERGE (pb)-[:SUPERSEDES]->(old)
  SET old.status = 'superseded', pb.corrected_from = coalesce(pb.corrected_from, old.corrected_from),
    pb.corrected_also = [c IN coalesce(old.corrected_also, []) + [old.corrected_from]
                         WHERE c IS NOT NULL AND c <> coalesce($corrected_from, old.corrected_from)],
    pb.remediation_json = coalesce(pb.remediation_json, old.remediation_json),
    pb.remediation_type = coalesce(pb.remediation_type, old.remediation_type))
RETURN pb.id AS id, pb.trust AS trust, refused, kept
