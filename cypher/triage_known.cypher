// A batch of alerts already stored (`triage_alert` for one alert, same rules): a repeat changes
// nothing but the annotations of a firing alert; a resolve marks the alert resolved, enqueues its
// `notify_cleared` task and takes it off its incident's firing count; a stale 'firing' after
// 'resolved' changes nothing. $alerts: [{key, status, ends_at_ms, annotations_json}], distinct
// keys. Each incident's firing count moves once for the whole batch (per-row SETs on one node
// would read stale values, FalkorDB 4.16), and the incident resolves when it reaches 0 with one
// of the batch's alerts resolved, at the latest end among them. Rows: one per incident, and
// one with a null `incident_id` for alerts stored in none (resolved without a firing, as
// `triage_alert` records them: nothing changes).
UNWIND $alerts AS x
MATCH (a:Alert {key: x.key})
WITH a, x, a.status AS prev
WITH a, x, prev, (prev = 'firing' AND x.status = 'resolved') AS resolving
SET a.status = CASE WHEN resolving THEN 'resolved' ELSE a.status END,
    a.ends_at_ms = CASE WHEN resolving THEN x.ends_at_ms ELSE a.ends_at_ms END,
    a.annotations_json = CASE WHEN prev = 'firing' THEN x.annotations_json ELSE a.annotations_json END
WITH a, prev, resolving
OPTIONAL MATCH (inc:Incident)-[:HAS_ALERT]->(a)
FOREACH (_ IN CASE WHEN resolving AND inc IS NOT NULL THEN [1] ELSE [] END |
  MERGE (t:Task {id: 'cleared:' + a.key})
    ON CREATE SET t += {kind: 'notify_cleared', incident_id: inc.id, alert_key: a.key,
// @include _fresh_task
}
  MERGE (t)-[:FOR]->(inc))
WITH inc, collect(a.key) AS keys, sum(CASE WHEN resolving THEN 1 ELSE 0 END) AS dropped,
     sum(CASE WHEN a.status = 'resolved' THEN 1 ELSE 0 END) AS resolved_here,
     max(CASE WHEN a.status = 'resolved' THEN a.ends_at_ms ELSE null END) AS last_end
// FOREACH over [inc]: a SET on a null `inc` is an error (FalkorDB 4.16)
FOREACH (i IN CASE WHEN inc IS NULL THEN [] ELSE [inc] END | SET i.firing = coalesce(i.firing, 0) - dropped)
WITH inc, keys, resolved_here, last_end
WITH inc, keys, last_end,
     (inc IS NOT NULL AND resolved_here > 0 AND inc.firing <= 0 AND inc.status <> 'resolved') AS closing
FOREACH (i IN CASE WHEN closing THEN [inc] ELSE [] END |
  SET i.status = 'resolved', i.resolved_at = coalesce(last_end, timestamp()))
RETURN inc.id AS incident_id, keys, closing
