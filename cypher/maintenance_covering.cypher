// Whether a maintenance window covers an incident now (database clock): one that names any of
// $components or $teams. When some do, the incident records them (IN_MAINTENANCE edges) and
// `maintenance_until` becomes the latest end among them. `until`: that end, or null when no
// window covers it now; `held_until`: what the incident recorded before (null: never held).
MATCH (i:Incident {id: $incident_id})
WITH i, i.maintenance_until AS held_until
OPTIONAL MATCH (m:Maintenance)
  WHERE m.ends_at > timestamp() AND m.starts_at <= timestamp()
    AND (any(c IN m.components WHERE c IN $components) OR any(t IN m.teams WHERE t IN $teams))
FOREACH (_ IN CASE WHEN m IS NULL THEN [] ELSE [1] END | MERGE (i)-[:IN_MAINTENANCE]->(m))
WITH i, held_until, max(m.ends_at) AS until, collect(m.reason)[0] AS reason,
     collect(m.by)[0] AS by
SET i.maintenance_until = CASE WHEN until IS NULL THEN i.maintenance_until ELSE until END
RETURN until, held_until, reason, by, i.status AS status
