// The tenant's heartbeats: alertname, when one last arrived (ms, database clock), when its
// current silence was paged (null: not paged), that silence's incident, and how long it has
// been silent now (ms, database clock: `doctor` says it without trusting its own clock).
MATCH (h:Heartbeat)
RETURN h.alertname AS alertname, h.last_at AS last_at, h.paged_at AS paged_at,
       h.incident_id AS incident_id, timestamp() - h.last_at AS silent_ms
ORDER BY alertname
