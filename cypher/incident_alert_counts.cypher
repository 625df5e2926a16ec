// How many alerts an incident has, by component (null: matched no component) and alertname:
// one row per pair, `alerts` (all) and `firing`, `since` (the pair's first start, ms), the most
// alerts first. With `first`, on every row: the key of the alert that opened the incident, the
// oldest (start, then key) of those that joined it by no path (`via` unset on the edge), else
// the oldest: an alert that joined later may have started earlier (Alertmanager's group_wait).
// No row for an incident without alerts.
MATCH (i:Incident {id: $incident_id})
CALL {
  WITH i
  MATCH (i)-[h:HAS_ALERT]->(o:Alert)
  WITH o, CASE WHEN h.via IS NULL THEN 0 ELSE 1 END AS joined
  ORDER BY joined, o.starts_at_ms, o.key LIMIT 1
  RETURN o.key AS first
}
MATCH (i)-[:HAS_ALERT]->(a:Alert)
OPTIONAL MATCH (a)-[:ON]->(c:Component)
WITH first, c.name AS component, a.alertname AS alertname, count(a) AS alerts,
     sum(CASE WHEN a.status = 'firing' THEN 1 ELSE 0 END) AS firing,
     min(a.starts_at_ms) AS since
RETURN component, alertname, alerts, firing, since, first
ORDER BY alerts DESC, since, component, alertname
