// How many alerts an incident has, by component (null: matched no component) and alertname:
// one row per pair, `alerts` (all) and `firing`, `since` (the pair's first start, ms), the most
// alerts first. With `first`, on every row: the key of the incident's oldest alert (start,
// then key), the one that opened it. No row for an incident without alerts.
MATCH (i:Incident {id: $incident_id})
CALL {
  WITH i
  MATCH (i)-[:HAS_ALERT]->(o:Alert)
  WITH o ORDER BY o.starts_at_ms, o.key LIMIT 1
  RETURN o.key AS first
}
MATCH (i)-[:HAS_ALERT]->(a:Alert)
OPTIONAL MATCH (a)-[:ON]->(c:Component)
WITH first, c.name AS component, a.alertname AS alertname, count(a) AS alerts,
     sum(CASE WHEN a.status = 'firing' THEN 1 ELSE 0 END) AS firing,
     min(a.starts_at_ms) AS since
RETURN component, alertname, alerts, firing, since, first
ORDER BY alerts DESC, since, component, alertname
