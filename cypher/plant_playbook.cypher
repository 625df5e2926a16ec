// A playbook written by a person (POST /api/v1/playbooks): pinned to a component, with its
// checks, starting at trust 0.5 like a learned one. Idempotent by id.
MATCH (c:Component {name: $component})
MERGE (pb:Playbook {id: $id})
  ON CREATE SET pb.title = $title, pb.failure_kind = $failure_kind, pb.tech = c.tech,
    pb.checks_json = $checks_json, pb.helped = 0, pb.misled = 0, pb.trust = 0.5,
    pb.status = 'active', pb.created_at = timestamp(), pb.author = $author
MERGE (pb)-[:PINNED_TO]->(c)
RETURN pb.id AS id, pb.trust AS trust, pb.status AS status
