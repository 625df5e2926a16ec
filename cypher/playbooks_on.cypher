// Active playbooks pinned to a component, to avoid learning the same one twice; their checks,
// so a next version keeps the shapes its repeats came in (learner.py, `merged_signature`);
// `learned_from` (the incident a verdict taught it on; null for one people wrote), since only a
// lesson a verdict taught is the same lesson again.
MATCH (pb:Playbook {status: 'active'})-[:PINNED_TO]->(c:Component {name: $component})
RETURN pb.id AS id, pb.failure_kind AS failure_kind, pb.trust AS trust,
       pb.checks_json AS checks_json, pb.learned_from AS learned_from
