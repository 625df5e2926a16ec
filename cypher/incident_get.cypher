// One incident with its finding (if any), its quiet window's end (`maintenance_until`, ms),
// the escalation level reached, how often it reopened (flapping), and its splits: the incident
// it was split from (`split_from`, or null) and those split from it (`split_into`, by id), and
// whether it was paged as `list_incidents.cypher` says it (`paged`, `nobody_paged`); for a
// heartbeat's silence (`heartbeat_overdue.cypher`), `heartbeat` (its alertname) and
// `last_seen` (ms: when it last arrived), else null.
MATCH (i:Incident {id: $incident_id})
OPTIONAL MATCH (s:Incident)-[:SPLIT_FROM]->(i)
WITH i, collect(s.id) AS split_into
OPTIONAL MATCH (i)-[:HAS_FINDING]->(f:Finding)
RETURN i.id AS id, i.status AS status, i.title AS title, i.severity AS severity,
       i.opened_at AS opened_at, i.resolved_at AS resolved_at, i.received_at AS received_at, i.root_cause AS root_cause,
       i.conclusive AS conclusive, i.notified_root_cause AS notified_root_cause, i.merged_into AS merged_into,
       i.acknowledged_at AS acknowledged_at, i.acknowledged_by AS acknowledged_by,
       i.resolved_by AS resolved_by, f.summary AS summary, f.confidence AS confidence,
       f.candidates AS candidates, f.paths_json AS paths_json,
       f.ruled_out_json AS ruled_out_json, f.planner AS planner,
       f.model AS model, f.second_opinion_json AS second_opinion_json,
       f.separated_by AS separated_by, f.evidence_json AS evidence_json,
       f.measured_json AS measured_json,
       i.maintenance_until AS maintenance_until, i.escalation_level AS escalation_level,
       i.reopens AS reopens, i.split_from AS split_from, split_into,
       coalesce(i.notified, false) AND coalesce(i.page_reached, true) AS paged,
       coalesce(i.notified, false) AND NOT coalesce(i.page_reached, true) AS nobody_paged,
       i.heartbeat AS heartbeat, i.last_seen AS last_seen
