// A firing heartbeat alert ($alertname, e.g. Watchdog) arrived: the tenant's Heartbeat node
// (one per alertname) gets `last_at` = now (database clock), which arms the silence check
// (heartbeat_overdue). A silence that was paged is over: `paged_at` is cleared so the next one
// pages again, and its incident (`incident_id`) resolves as a resolve by hand does
// (resolve_incident): `resolved_at`, `resolved_by` "the <alertname> heartbeat coming back" and
// the responder's `notify_state:resolve:<id>` task (the resolve notice, the ticket closed, the
// page edited), once: a later heartbeat finds no incident to resolve. Rows: one, with the
// incident resolved (null: none).
MERGE (h:Heartbeat {alertname: $alertname})
WITH h, h.incident_id AS silent
SET h.last_at = timestamp(), h.paged_at = null, h.incident_id = null,
    h.received = coalesce(h.received, 0) + $count
WITH h, silent
OPTIONAL MATCH (i:Incident {id: coalesce(silent, '')})
WITH h, i, i IS NOT NULL AND i.status = 'open' AS recovering
FOREACH (_ IN CASE WHEN recovering THEN [1] ELSE [] END |
  SET i.status = 'resolved', i.resolved_at = timestamp(),
      i.resolved_by = 'the ' + h.alertname + ' heartbeat coming back'
// @include _resolve_notice
)
RETURN h.last_at AS last_at, CASE WHEN recovering THEN i.id ELSE null END AS recovered
