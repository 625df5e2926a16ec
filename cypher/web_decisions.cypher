// Every Decision of an incident, newest first, with each playbook it considered: the path of
// recall, trust at use, the checks' results, whether it applied and steered, and its verdict.
MATCH (:Incident {id: $incident_id})-[:HAS_DECISION]->(d:Decision)
OPTIONAL MATCH (d)-[u:USED]->(pb:Playbook)
RETURN d.id AS decision_id, d.at AS at, d.planner AS planner, pb.id AS playbook,
       pb.title AS title, pb.failure_kind AS failure_kind, pb.status AS status,
       u.path AS path, u.candidate AS candidate, u.trust_at_use AS trust_at_use,
       u.checks_json AS checks_json, u.applicable AS applicable, u.steered AS steered,
       u.verdict AS verdict
ORDER BY at DESC, decision_id, playbook
