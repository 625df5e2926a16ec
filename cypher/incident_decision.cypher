// The playbooks the latest Decision of an incident used, with what happened at use.
MATCH (i:Incident {id: $incident_id})-[:HAS_DECISION]->(d:Decision)
WITH d ORDER BY d.at DESC LIMIT 1
MATCH (d)-[u:USED]->(pb:Playbook)
RETURN d.id AS decision_id, pb.id AS playbook, pb.failure_kind AS failure_kind,
       u.candidate AS candidate, u.applicable AS applicable, u.steered AS steered,
       u.verdict AS verdict, u.checks_json AS checks_json
