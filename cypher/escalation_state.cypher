// What an escalation level needs to know of its incident, read at each claim: its status,
// acknowledgement and quiet window (`maintenance_until`, ms: a snooze), how often it reopened
// or was retriggered (a failed remediation) and when last (ms), the database's clock now (ms: levels run on it), and its actions (the
// first page's reservation time and ref, and the levels already sent). Read only.
MATCH (i:Incident {id: $incident_id})
OPTIONAL MATCH (a:Action)-[:FOR]->(i)
WITH i, collect(CASE WHEN a IS NULL THEN null ELSE {
       intent_id: a.intent_id, status: a.status, reserved_at: a.reserved_at,
       external_ref: a.external_ref} END) AS actions
RETURN i.id AS id, i.status AS status, i.title AS title, i.severity AS severity,
       i.opened_at AS opened_at, i.received_at AS received_at,
       i.acknowledged_at AS acknowledged_at, i.acknowledged_by AS acknowledged_by,
       coalesce(i.escalation_level, 0) AS escalation_level,
       i.maintenance_until AS maintenance_until, coalesce(i.reopens, 0) AS reopens,
       i.reopened_at AS reopened_at, coalesce(i.retriggers, 0) AS retriggers,
       i.retriggered_at AS retriggered_at, timestamp() AS now, actions
