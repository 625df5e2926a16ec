// The tenant's heartbeats: alertname, when one last arrived (ms, database clock), when its
// current silence was paged (null: not paged) and that silence's incident.
MATCH (h:Heartbeat)
RETURN h.alertname AS alertname, h.last_at AS last_at, h.paged_at AS paged_at,
       h.incident_id AS incident_id
ORDER BY alertname
