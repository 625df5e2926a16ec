// Every alert of an incident with the component it is on (null when no label matched).
MATCH (i:Incident {id: $incident_id})-[:HAS_ALERT]->(a:Alert)
OPTIONAL MATCH (a)-[:ON]->(c:Component)
RETURN a.key AS key, a.fingerprint AS fingerprint, a.alertname AS alertname, a.status AS status,
       a.severity AS severity, a.starts_at AS starts_at, a.starts_at_ms AS starts_at_ms,
       a.ends_at_ms AS ends_at_ms, a.labels_json AS labels_json,
       a.annotations_json AS annotations_json, a.values_json AS values_json,
       a.generator_url AS generator_url, a.link AS link, a.title AS title, a.source AS source,
       c.name AS component
ORDER BY a.starts_at_ms, a.key
