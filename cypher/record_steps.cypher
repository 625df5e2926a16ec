// Checkpoint a run of consecutive steps of a task in one round trip (fenced: owner, epoch and an
// unexpired lease in the same query), and extend the lease (a heartbeat). $steps: maps
// {n, tool, args, result, started_at, touched} in order of n, starting at $first; each is linked
// NEXT from the one before (the first from the stored step $first - 1, if any) and TOUCHED to
// the components it names. Every read comes before the first write (DESIGN.md §5). Zero rows
// means the lease was lost and nothing was written.
MATCH (t:Task {id: $task_id})
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = $epoch AND t.lease_until >= timestamp()
OPTIONAL MATCH (prev:Step {task_id: $task_id, n: $first - 1})
OPTIONAL MATCH (c:Component) WHERE c.name IN $touched
WITH t, prev, collect(c) AS components
SET t.lease_until = timestamp() + $lease_ms
WITH t, prev, components
UNWIND range(0, size($steps) - 1) AS i
WITH t, prev, components, i, $steps[i] AS st
CREATE (s:Step {task_id: $task_id, n: st.n, tool: st.tool, args: st.args, result: st.result,
  started_at: st.started_at, at: timestamp(), epoch: $epoch})-[:OF]->(t)
WITH prev, components, i, st, s ORDER BY i
WITH prev, components, collect(s) AS made, collect(st.touched) AS touched
UNWIND range(0, size(made) - 1) AS i
WITH components, made[i] AS s, CASE WHEN i = 0 THEN prev ELSE made[i - 1] END AS before,
     touched[i] AS names
FOREACH (_ IN CASE WHEN before IS NULL THEN [] ELSE [1] END | CREATE (before)-[:NEXT]->(s))
FOREACH (c IN [x IN components WHERE x.name IN names] | CREATE (s)-[:TOUCHED]->(c))
RETURN s.n AS n
