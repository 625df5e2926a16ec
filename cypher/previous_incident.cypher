// The latest earlier incident that had an alert of the same fingerprint as one of this
// incident's alerts (a refire: same fingerprint, new startsAt), with its sent ticket's ref.
MATCH (i:Incident {id: $incident_id})-[:HAS_ALERT]->(a:Alert)
MATCH (p:Incident)-[:HAS_ALERT]->(:Alert {fingerprint: a.fingerprint})
WHERE p.id <> i.id AND p.opened_at <= i.opened_at
WITH DISTINCT p
OPTIONAL MATCH (t:Action {kind: 'ticket', status: 'sent'})-[:FOR]->(p)
WITH p, t.external_ref AS ticket_ref
ORDER BY p.opened_at DESC, p.id LIMIT 1
RETURN p.id AS id, p.status AS status, p.opened_at AS opened_at, p.resolved_at AS resolved_at,
       p.root_cause AS root_cause, ticket_ref
