// Checkpoint one step of a task (fenced: owner, epoch and an unexpired lease in the same query).
// Writing a step also extends the lease (a heartbeat). Zero rows means the lease was lost and nothing was written.
MATCH (t:Task {id: $task_id})
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = $epoch AND t.lease_until >= timestamp()
SET t.lease_until = timestamp() + $lease_ms
WITH t
OPTIONAL MATCH (prev:Step {task_id: $task_id, n: $n - 1})
CREATE (s:Step {task_id: $task_id, n: $n, tool: $tool, args: $args, result: $result,
  started_at: $started_at, at: timestamp(), epoch: $epoch})-[:OF]->(t)
FOREACH (_ IN CASE WHEN prev IS NULL THEN [] ELSE [1] END | CREATE (prev)-[:NEXT]->(s))
WITH s
OPTIONAL MATCH (c:Component) WHERE c.name IN $touched
WITH s, collect(c) AS touched
FOREACH (c IN touched | CREATE (s)-[:TOUCHED]->(c))
RETURN s.n AS n
