// Every alert of an incident with the component it is on (null when no label matched) and the
// dependency path (or shared groupKey) that joined it to the incident (`via`; '' or null for
// the alert that opened it).
MATCH (i:Incident {id: $incident_id})-[h:HAS_ALERT]->(a:Alert)
OPTIONAL MATCH (a)-[:ON]->(c:Component)
RETURN a.key AS key, a.fingerprint AS fingerprint, a.alertname AS alertname, a.status AS status,
       a.severity AS severity, a.starts_at AS starts_at, a.starts_at_ms AS starts_at_ms,
       a.ends_at_ms AS ends_at_ms, a.labels_json AS labels_json,
       a.annotations_json AS annotations_json, a.values_json AS values_json,
       a.generator_url AS generator_url, a.link AS link, a.title AS title, a.source AS source,
       a.group_key AS group_key, c.name AS component, h.via AS via
ORDER BY a.starts_at_ms, a.key
