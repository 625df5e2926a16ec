// bench/storm.py only: the least one notification's alerts must leave in the graph before the
// 200, one chunk per query: each alert (MERGE on its key, so a resend changes nothing) on its
// component, in the delivery's one open incident, which has the task that will diagnose and
// page it (both MERGEd, so every chunk may come first).
MERGE (i:Incident {id: $incident_id})
  ON CREATE SET i.status = 'open', i.opened_at = timestamp()
MERGE (t:Task {id: $task_id})
  ON CREATE SET t += {kind: 'investigate', incident_id: $incident_id,
// @include _fresh_task
}
MERGE (t)-[:FOR]->(i)
WITH i
UNWIND $runs AS run  // [component, first, end]: alerts[first..end-1] are on that component
MATCH (c:Component {name: run[0]})
UNWIND range(run[1], run[2] - 1) AS n
WITH i, c, $alerts[n] AS row  // [key, component, fingerprint, status, alertname, starts_at,
                              // labels_json, annotations_json]: lists, as the product sends
MERGE (a:Alert {key: row[0]})
  ON CREATE SET a.fingerprint = row[2], a.status = row[3], a.alertname = row[4],
    a.starts_at = row[5], a.labels_json = row[6], a.annotations_json = row[7],
    a.received_at = timestamp()
MERGE (a)-[:ON]->(c)
MERGE (i)-[:HAS_ALERT]->(a)
RETURN count(a) AS written
