// Every playbook with where it is pinned, its trust and status (newest first).
MATCH (pb:Playbook)-[:PINNED_TO]->(c:Component)
OPTIONAL MATCH (pb)-[:SUPERSEDES]->(old:Playbook)
RETURN pb.id AS id, pb.title AS title, pb.failure_kind AS failure_kind, c.name AS component,
       pb.checks_json AS checks_json, pb.helped AS helped, pb.misled AS misled,
       pb.trust AS trust, pb.status AS status, old.id AS supersedes, pb.created_at AS created_at,
       pb.retired_reason AS retired_reason
ORDER BY created_at DESC, id
