// Reserve the external action for an intent id (unique) while the task lease is held, and renew
// the lease so the outside call that follows gets a whole one (a heartbeat in the same query).
// `mine` is true only for the attempt that created the reservation.
// First the outcomes of this attempt's earlier outside calls ($records, as record_actions.cypher),
// whether or not the lease still holds: the calls happened, and the graph must say so.
OPTIONAL MATCH (done:Action) WHERE done.intent_id IN [r IN $records | r.intent_id]
WITH collect(done) AS done
FOREACH (d IN done |
  SET d.status = [r IN $records WHERE r.intent_id = d.intent_id][0].status,
      d.external_ref = [r IN $records WHERE r.intent_id = d.intent_id][0].external_ref,
      d.detail = [r IN $records WHERE r.intent_id = d.intent_id][0].detail,
      d.updated_at = timestamp())
WITH timestamp() AS now
MATCH (t:Task {id: $task_id})-[:FOR]->(i:Incident)
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = $epoch AND t.lease_until >= now
SET t.lease_until = now + $lease_ms
WITH t, i
CALL {
  // The run's deferred steps ($steps from $first_step, components $touched), written as
  // record_steps.cypher writes them: one round trip fewer (issue #16). [] writes nothing.
  WITH t
  OPTIONAL MATCH (prev:Step {task_id: $task_id, n: $first_step - 1})
  OPTIONAL MATCH (c:Component) WHERE c.name IN $touched
  WITH t, prev, collect(c) AS components
  UNWIND range(0, size($steps) - 1) AS k
  WITH t, prev, components, k, $steps[k] AS st
  CREATE (s:Step {task_id: $task_id, n: st.n, tool: st.tool, args: st.args, result: st.result,
    started_at: st.started_at, at: timestamp(), epoch: $epoch})-[:OF]->(t)
  WITH prev, components, k, st, s ORDER BY k
  WITH prev, components, collect(s) AS made, collect(st.touched) AS names
  UNWIND range(0, size(made) - 1) AS k
  WITH components, made[k] AS s, CASE WHEN k = 0 THEN prev ELSE made[k - 1] END AS before,
       names[k] AS near
  FOREACH (_ IN CASE WHEN before IS NULL THEN [] ELSE [1] END | CREATE (before)-[:NEXT]->(s))
  FOREACH (c IN [x IN components WHERE x.name IN near] | CREATE (s)-[:TOUCHED]->(c))
  RETURN count(s) AS recorded
}
MERGE (a:Action {intent_id: $intent_id})
  ON CREATE SET a.kind = $kind, a.status = 'reserved', a.attempt_id = $attempt_id,
    a.adapter = $adapter, a.reserved_at = timestamp(), a.incident_id = i.id
MERGE (a)-[:FOR]->(i)
RETURN a.status AS status, a.attempt_id = $attempt_id AS mine, a.external_ref AS external_ref
