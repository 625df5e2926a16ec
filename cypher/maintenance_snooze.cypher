// Snooze an incident: a maintenance window ($id, deterministic per click, so Slack's retry
// changes nothing) over the incident's components for $minutes from now (database clock); the
// incident records it and `maintenance_until`. Its escalation waits for the end; new incidents
// on those components are not paged before it. No row: no such incident.
MATCH (i:Incident {id: $incident_id})
WITH i, timestamp() AS now
MERGE (m:Maintenance {id: $id})
  ON CREATE SET m.components = i.components + CASE WHEN i.root_cause IS NULL
                  OR i.root_cause IN i.components THEN [] ELSE [i.root_cause] END,
    m.teams = [], m.starts_at = now, m.ends_at = now + $minutes * 60000,
    m.reason = $reason, m.by = $by
MERGE (i)-[:IN_MAINTENANCE]->(m)
SET i.maintenance_until = CASE WHEN coalesce(i.maintenance_until, 0) < m.ends_at
                               THEN m.ends_at ELSE i.maintenance_until END
RETURN m.id AS id, m.components AS components, m.ends_at AS ends_at, i.id AS incident_id
