// A world file's playbooks (gateway/world/playbooks.py), one row each in $playbooks: created
// active at trust 0.5, or updated in place (title, checks, failure kind, remediation, author)
// keeping what memory earned (trust, helped, misled, remediation trust), re-pinned when its
// component changed, and active again when an earlier import had retired it as no longer in
// the file (a person's retirement stands). `world_source` names the file, so the next import
// of it can retire what it dropped (retire_world_playbooks.cypher).
// Returns per playbook: created (new now), same (its content was already this), revived, and
// its status and retired_reason after the import (one retired by verdicts or a person stays
// retired: the import says so, and `blast-radius playbook restore` brings it back).
UNWIND $playbooks AS p
MATCH (c:Component {name: p.component})
MERGE (pb:Playbook {id: p.id})
  ON CREATE SET pb.helped = 0, pb.misled = 0, pb.trust = 0.5, pb.status = 'active',
    pb.created_at = $now
WITH p, c, pb, pb.title IS NULL AS created,
     [pb.title, pb.checks_json, coalesce(pb.failure_kind, ''), coalesce(pb.remediation_json, '')]
       = [p.title, p.checks_json, coalesce(p.failure_kind, ''), coalesce(p.remediation_json, '')]
       AS same,
     pb.status = 'retired' AND coalesce(pb.retired_reason, '') STARTS WITH $dropped AS revived
OPTIONAL MATCH (pb)-[old:PINNED_TO]->(other:Component) WHERE other.name <> c.name
DELETE old
WITH DISTINCT p, c, pb, created, same, revived
MERGE (pb)-[:PINNED_TO]->(c)
SET pb.title = p.title, pb.checks_json = p.checks_json, pb.failure_kind = p.failure_kind,
    pb.tech = c.tech, pb.author = coalesce(p.author, pb.author),
    pb.remediation_json = p.remediation_json, pb.remediation_type = p.remediation_type,
    pb.world_source = p.source,
    pb.status = CASE WHEN revived THEN 'active' ELSE pb.status END,
    pb.retired_at = CASE WHEN revived THEN null ELSE pb.retired_at END,
    pb.retired_reason = CASE WHEN revived THEN null ELSE pb.retired_reason END
RETURN pb.id AS id, c.name AS component, p.source AS source, created, same, revived,
       pb.status AS status, pb.retired_reason AS retired_reason
