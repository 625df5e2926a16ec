// bench/floor.py only: the least an accepted alert must leave in the graph before the 200,
// in one write: the alert (MERGE on its key, so a redelivery changes nothing), an open
// incident on its component and the task that will diagnose and page it.
MATCH (c:Component {name: $component})
MERGE (a:Alert {key: $key})
  ON CREATE SET a.fingerprint = $fingerprint, a.status = 'firing', a.received_at = timestamp()
MERGE (a)-[:ON]->(c)
WITH a, c
CREATE (i:Incident {id: $incident_id, status: 'open', opened_at: timestamp()})-[:HAS_ALERT]->(a)
CREATE (t:Task {id: $task_id, kind: 'investigate', incident_id: $incident_id,
// @include _fresh_task
})-[:FOR]->(i)
RETURN t.id AS id
