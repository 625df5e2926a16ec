// The responder's reading of an incident in one round trip: `incident_get`'s columns, when it
// last reopened (`reopened_at`, ms), the end of the last window that covered it
// (`maintenance_until`), the similar incidents found (`similar_json`: a restated page keeps its
// "Similar:" line), what the page showed when last sent or edited for the finding
// (`notified_shows`), `alerts`, the rows `incident_alerts` returns (as maps; the responder
// sorts them by start), and `held`, the ended windows that held the page or the reopen's
// notice (`_held_windows`: a restated page keeps saying so); `heartbeat` and `last_seen` (the
// alertname and last arrival, ms, of the heartbeat whose silence it is; else null).
MATCH (i:Incident {id: $incident_id})
OPTIONAL MATCH (i)-[:HAS_FINDING]->(f:Finding)
OPTIONAL MATCH (i)-[h:HAS_ALERT]->(a:Alert)
OPTIONAL MATCH (a)-[:ON]->(c:Component)
WITH i, f, collect(CASE WHEN a IS NULL THEN null ELSE {
       key: a.key, fingerprint: a.fingerprint, alertname: a.alertname, status: a.status,
       severity: a.severity, starts_at: a.starts_at, starts_at_ms: a.starts_at_ms,
       ends_at_ms: a.ends_at_ms, labels_json: a.labels_json, annotations_json: a.annotations_json,
       values_json: a.values_json, generator_url: a.generator_url, link: a.link, title: a.title,
       source: a.source, group_key: a.group_key, component: c.name, via: h.via,
       silence_url: a.silence_url} END) AS alerts
// @include _held_windows
RETURN i.id AS id, i.status AS status, i.title AS title, i.severity AS severity,
       i.opened_at AS opened_at, i.resolved_at AS resolved_at, i.received_at AS received_at,
       i.root_cause AS root_cause, i.conclusive AS conclusive,
       i.notified_root_cause AS notified_root_cause, i.notified_shows AS notified_shows,
       i.merged_into AS merged_into,
       i.acknowledged_at AS acknowledged_at, i.acknowledged_by AS acknowledged_by,
       i.resolved_by AS resolved_by, coalesce(i.reopens, 0) AS reopens,
       i.reopened_at AS reopened_at, i.maintenance_until AS maintenance_until,
       f.summary AS summary, f.confidence AS confidence, f.candidates AS candidates,
       f.paths_json AS paths_json, f.ruled_out_json AS ruled_out_json, f.measured_json AS measured_json, f.planner AS planner,
       f.model AS model, f.second_opinion_json AS second_opinion_json,
       f.separated_by AS separated_by, f.evidence_json AS evidence_json,
       i.similar_json AS similar_json, i.heartbeat AS heartbeat, i.last_seen AS last_seen,
       alerts, held
