// Active playbooks pinned to a component, to avoid learning the same one twice.
MATCH (pb:Playbook {status: 'active'})-[:PINNED_TO]->(c:Component {name: $component})
RETURN pb.id AS id, pb.failure_kind AS failure_kind, pb.trust AS trust
