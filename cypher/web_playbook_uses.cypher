// Every use of every playbook, oldest first: the trust it had when a decision used it and the
// verdict that use got (its trust history).
MATCH (d:Decision)-[u:USED]->(pb:Playbook)
RETURN pb.id AS playbook, d.incident_id AS incident_id, d.at AS at,
       u.trust_at_use AS trust_at_use, u.steered AS steered, u.verdict AS verdict
ORDER BY at, incident_id
