// Store the investigator's findings, each fenced on its own task: $tasks holds one row per task
// ({task_id, epoch} and the fields below); a task whose owner ($owner), epoch or lease no longer
// holds gets no row back and nothing of its row is written (its steps, finding, completion), the
// others go on (one query for a batch's findings, TaskRun.complete_with).
// One Finding per incident, updated by re-investigations; a finding from fewer alerts never
// overwrites one from more (a slow re-investigation finishing late): then `fresh` is false and
// nothing changes. row.root_cause is null when the finding is inconclusive. row.model: the
// planner model that decided (null for memory and rules); row.second_opinion_json: the graph's
// check of the model's answer. row.measured_json: ruled-out component -> the measurement its
// reason rests on. The run's deferred steps ride along (row.steps, `_steps_call`).
// With row.outcome set, the task is completed in the same query and the follow-up task
// row.next_kind (row.next_id) enqueued, as complete_task.cypher does; with row.outcome null the
// task stays claimed (a split may follow).
// With row.claim_next the follow-up is claimed for this worker ($owner, attempt
// row.next_attempt_id, a lease of $lease_ms) as it is created, so the same worker goes on with it
// without a claim query; `next_claimed` says whether it did (not when the follow-up existed).
// The lease is extended by $lease_ms (a split may follow while the task stays claimed).
// row.text_vec (the incident's hashed bag of words, or null without memory) and row.similar_json
// (the similar incidents found now) are what similarity keeps for the page, the ticket and later
// incidents: the vector as float32 on an `IncidentText` of the incident's own, under the vector
// index, created with its first finding and never written again (FalkorDB 4 leaves a stale
// index entry at every write to an indexed node, counted against the k `similar_incidents`
// asks: on the incident, its verdicts and resolution hid it from later incidents). A fresh
// finding whose alerts read otherwise replaces it (a deleted node leaves one stale entry too;
// a re-investigation whose alerts read the same leaves it alone).
WITH timestamp() AS now
UNWIND $tasks AS row
MATCH (t:Task {id: row.task_id})-[:FOR]->(i:Incident)
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = row.epoch AND t.lease_until >= now
SET t.lease_until = now + $lease_ms
WITH t, i, row
// @include _steps_call
MERGE (f:Finding {id: row.finding_id})
  ON CREATE SET f.created_at = timestamp(), f.alerts_seen = 0
MERGE (i)-[:HAS_FINDING]->(f)
WITH t, i, f, row, f.alerts_seen <= row.alerts_seen AS fresh
FOREACH (_ IN CASE WHEN fresh THEN [1] ELSE [] END |
  SET f.alerts_seen = row.alerts_seen, f.updated_at = timestamp(), f.root_cause = row.root_cause,
      f.candidates = row.candidates, f.confidence = row.confidence, f.summary = row.summary,
      f.conclusive = row.conclusive, f.paths_json = row.paths_json,
      f.ruled_out_json = row.ruled_out_json, f.planner = row.planner, f.model = row.model,
      f.second_opinion_json = row.second_opinion_json,
      f.separated_by = row.separated_by, f.evidence_json = row.evidence_json,
      f.measured_json = row.measured_json,
      i.root_cause = row.root_cause, i.conclusive = row.conclusive,
      i.similar_json = row.similar_json)
WITH t, i, f, row, fresh
CALL {
  WITH i, row, fresh
  WITH i, fresh, CASE WHEN row.text_vec IS NULL THEN null ELSE vecf32(row.text_vec) END AS words
  OPTIONAL MATCH (i)<-[:OF]-(had:IncidentText)
  WITH i, fresh, words, collect(had) AS had
  WITH i, fresh, words, had,
       any(x IN had WHERE CASE WHEN words IS NULL THEN false
                               ELSE vec.euclideanDistance(x.text_vec, words) = 0 END) AS same
  FOREACH (x IN CASE WHEN fresh AND NOT same THEN had ELSE [] END | DETACH DELETE x)
  FOREACH (_ IN CASE WHEN fresh AND NOT same AND words IS NOT NULL THEN [1] ELSE [] END |
    CREATE (:IncidentText {text_vec: words})-[:OF]->(i))
  RETURN count(*) AS texts
}
WITH t, i, f, row, fresh
// What the finding links to, each in a subquery of its own task (one row in, one out). Only the
// fields it uses pass its groupings: grouping by `row` (with its steps' results) cost more than
// the links themselves (`_steps_call`).
CALL {
  WITH i, f, row, fresh
  WITH i, f, fresh, row.root_cause AS root_cause, row.impacted AS impacted_names,
       row.change_ids AS change_ids
  OPTIONAL MATCH (i)-[old:ROOT_CAUSE]->(:Component)
  WITH i, f, fresh, root_cause, impacted_names, change_ids, collect(old) AS olds
  FOREACH (r IN CASE WHEN fresh THEN olds ELSE [] END | DELETE r)
  // coalesce: an index lookup of null (no root cause) scans every Component.
  WITH i, f, fresh, root_cause, impacted_names, change_ids
  OPTIONAL MATCH (rc:Component {name: coalesce(root_cause, '')})
  FOREACH (_ IN CASE WHEN fresh AND rc IS NOT NULL THEN [1] ELSE [] END |
    MERGE (i)-[:ROOT_CAUSE]->(rc))
  WITH i, f, fresh, impacted_names, change_ids
  OPTIONAL MATCH (i)-[:HAS_ALERT]->(a:Alert)
  WITH i, f, fresh, impacted_names, change_ids, collect(a) AS alerts
  FOREACH (a IN CASE WHEN fresh THEN alerts ELSE [] END | MERGE (f)-[:SUPPORTED_BY]->(a))
  WITH i, f, fresh, impacted_names, change_ids
  // one lookup per name or id ('' matches none): `IN row.impacted` scanned every Component
  UNWIND impacted_names + [''] AS name
  OPTIONAL MATCH (imp:Component {name: name})
  WITH i, f, fresh, change_ids, collect(imp) AS impacted
  FOREACH (c IN CASE WHEN fresh THEN impacted ELSE [] END | MERGE (i)-[:IMPACTED]->(c))
  WITH f, fresh, change_ids
  UNWIND change_ids + [''] AS change_id
  OPTIONAL MATCH (ch:Change {id: change_id})
  WITH f, fresh, collect(ch) AS changes
  FOREACH (ch IN CASE WHEN fresh THEN changes ELSE [] END | MERGE (f)-[:SUPPORTED_BY]->(ch))
  RETURN count(*) AS linked
}
FOREACH (_ IN CASE WHEN row.outcome IS NULL THEN [] ELSE [1] END |
  SET t.status = 'done', t.finished_at = timestamp(), t.outcome = row.outcome)
FOREACH (_ IN CASE WHEN row.outcome IS NULL OR row.next_kind IS NULL THEN [] ELSE [1] END |
  MERGE (n:Task {id: row.next_id})
    ON CREATE SET n += {kind: row.next_kind, incident_id: i.id,
// @include _chained_task
}
  MERGE (n)-[:FOR]->(i))
WITH t, i, f, row, fresh
OPTIONAL MATCH (n:Task {id: coalesce(row.next_id, '')})
WITH t, f, fresh, i, n, n IS NOT NULL AND n.owner = $owner AND n.attempt_id = row.next_attempt_id
     AND n.epoch = 1 AS next_claimed
RETURN t.id AS task_id, f.id AS id, fresh, next_claimed, n.kind AS next_kind,
       i.id AS incident_id
