// Every armed heartbeat (one that arrived at least once) silent for longer than $timeout_ms,
// on the database clock, and not paged for this silence yet: in the same query it is marked
// paged and opens one incident ("the alerting pipeline may be down") with an inconclusive
// finding and its `respond` task, so the default route is paged once per silence, exactly once
// (the incident id is the silence's: `inc-heartbeat-<last_at>`; the page is its intent). The
// incident keeps which heartbeat (`heartbeat`, its alertname) and when it last arrived
// (`last_seen`, ms), so the web page says what stopped and since when. The finding's summary
// says what to check; what may be unseen is the headline's (agents/triage/heartbeat.stopped),
// which every reader puts before it.
MATCH (h:Heartbeat)
WHERE h.last_at IS NOT NULL AND h.last_at < timestamp() - $timeout_ms AND h.paged_at IS NULL
WITH h, 'inc-heartbeat-' + toString(h.last_at) AS id, timestamp() - h.last_at AS silent_ms
// under two minutes in seconds ("for 1 s", not "for 0 min": a timeout may be seconds long)
WITH h, id, CASE WHEN silent_ms < 120000 THEN toString(silent_ms / 1000) + ' s'
                 ELSE toString(silent_ms / 60000) + ' min' END AS silence
SET h.paged_at = timestamp(), h.incident_id = id
MERGE (i:Incident {id: id})
  ON CREATE SET i.status = 'open', i.severity = 'critical', i.severity_rank = 4,
    i.title = 'No ' + h.alertname + ' heartbeat for ' + silence
      + ': the alerting pipeline may be down',
    i.opened_at = timestamp(), i.received_at = timestamp(), i.group_keys = [], i.firing = 0,
    i.components = [], i.hold_until = 0, i.heartbeat = h.alertname, i.conclusive = false,
    i.last_seen = h.last_at
MERGE (f:Finding {id: 'finding:' + id})
  ON CREATE SET f.created_at = timestamp(), f.updated_at = timestamp(), f.alerts_seen = 0,
    f.candidates = [], f.confidence = 0.0, f.conclusive = false, f.paths_json = '[]',
    f.ruled_out_json = '{}', f.planner = 'heartbeat',
    f.summary = 'The ' + h.alertname + ' alert fires all the time while Prometheus and '
      + 'Alertmanager work, and none arrived for ' + silence + '. Check that '
      + 'Prometheus evaluates rules, that Alertmanager runs and that its webhook reaches this '
      + 'gateway.'
MERGE (i)-[:HAS_FINDING]->(f)
MERGE (n:Task {id: 'respond:' + id})
  ON CREATE SET n += {kind: 'respond', incident_id: id,
// @include _fresh_task
}
MERGE (n)-[:FOR]->(i)
RETURN h.alertname AS alertname, h.last_at AS last_at, id AS incident_id
