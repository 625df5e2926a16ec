// A playbook written by a person (POST /api/v1/playbooks): pinned to a component, with its
// checks and its remediation (JSON or null), starting at trust 0.5 like a learned one.
// Idempotent by id: a repeat with the same title, checks, remediation and component changes nothing; an id that already names another playbook
// matches no row (so it is never pinned to a second component), and the route answers 422.
// The tenant quota is checked in this same write (writes to a graph run one at a time, so
// concurrent posts cannot all pass it): `kept` counts the playbooks not retired (learned or
// written by a person); a new id when `kept` >= $max_playbooks creates nothing and answers
// `refused` true (id null). An id already stored is never refused.
OPTIONAL MATCH (other:Playbook)
WHERE other.status <> 'retired'
WITH count(other) AS kept
MATCH (c:Component {name: $component})
OPTIONAL MATCH (old:Playbook {id: $id})
WITH c, old, kept
WHERE old IS NULL OR (old.title = $title AND old.checks_json = $checks_json
  AND coalesce(old.failure_kind, '') = coalesce($failure_kind, '')
  AND coalesce(old.remediation_json, '') = coalesce($remediation_json, '') AND (old)-[:PINNED_TO]->(c))
WITH c, kept, old IS NULL AND kept >= $max_playbooks AS refused
FOREACH (_ IN CASE WHEN refused THEN [] ELSE [1] END |
  MERGE (pb:Playbook {id: $id})
    ON CREATE SET pb.title = $title, pb.failure_kind = $failure_kind, pb.tech = c.tech,
      pb.checks_json = $checks_json, pb.helped = 0, pb.misled = 0, pb.trust = 0.5,
      pb.status = 'active', pb.created_at = timestamp(), pb.author = $author,
      pb.remediation_json = $remediation_json, pb.remediation_type = $remediation_type
  MERGE (pb)-[:PINNED_TO]->(c))
WITH kept, refused
OPTIONAL MATCH (pb:Playbook {id: $id})
RETURN pb.id AS id, pb.trust AS trust, pb.status AS status, refused, kept
