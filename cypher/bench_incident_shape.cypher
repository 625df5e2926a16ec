// tests/triage/test_triage_fast.py only: every incident holding alerts as triage left it,
// comparable across graphs (incident and task ids differ): its fields, each alert with the path
// it joined by, its component and properties, and its tasks' kinds.
MATCH (i:Incident)-[h:HAS_ALERT]->(a:Alert)
OPTIONAL MATCH (a)-[:ON]->(c:Component)
WITH i, a, h, c ORDER BY a.key
WITH i, collect([a.key, coalesce(h.via, ''), coalesce(c.name, ''), a.component, a.title,
                 a.severity, a.status, a.starts_at_ms, a.labels_json, a.annotations_json,
                 a.values_json, a.silence_url, a.link, a.group_key, a.received_at > 0]) AS alerts
OPTIONAL MATCH (t:Task)-[:FOR]->(i)
WITH i, alerts, t ORDER BY t.kind
RETURN i.status AS status, i.severity AS severity, i.severity_rank AS severity_rank,
       i.firing AS firing, i.components AS components, i.group_keys AS group_keys,
       i.opened_at AS opened_at, i.hold_until > 0 AS held, alerts, collect(t.kind) AS tasks
