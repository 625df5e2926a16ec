// One page of an incident's alerts for people (the API, the web page, the CLI): $limit alerts
// after the first $offset, oldest first (start, then key), or with $firing_first the firing
// ones first (each part oldest first). Columns as `incident_alerts`, and for the web page why
// each joined: every property of its HAS_ALERT edge (`joined`, whatever triage wrote there)
// and when it arrived (`received_at`, ms).
MATCH (:Incident {id: $incident_id})-[h:HAS_ALERT]->(a:Alert)
WITH h, a
ORDER BY CASE WHEN $firing_first AND a.status = 'firing' THEN 0 ELSE 1 END, a.starts_at_ms, a.key
SKIP $offset LIMIT $limit
OPTIONAL MATCH (a)-[:ON]->(c:Component)
RETURN a.key AS key, a.fingerprint AS fingerprint, a.alertname AS alertname, a.status AS status,
       a.severity AS severity, a.starts_at AS starts_at, a.starts_at_ms AS starts_at_ms,
       a.ends_at_ms AS ends_at_ms, a.labels_json AS labels_json,
       a.annotations_json AS annotations_json, a.generator_url AS generator_url, a.link AS link,
       a.source AS source, a.silence_url AS silence_url, a.values_json AS values_json,
       c.name AS component, h.via AS via,
       properties(h) AS joined, a.received_at AS received_at
