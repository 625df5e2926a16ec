// The external actions (notifications, tickets) taken for an incident, by intent id.
MATCH (a:Action)-[:FOR]->(i:Incident {id: $incident_id})
RETURN a.intent_id AS intent_id, a.kind AS kind, a.status AS status, a.adapter AS adapter,
       a.external_ref AS external_ref, a.reserved_at AS reserved_at
ORDER BY a.reserved_at, a.intent_id
