// A fragment, not a query: `cypher.load` puts it where a query says `// @include _steps_call`,
// after a fenced MATCH of the task `t`. It writes the run's deferred steps: $steps (maps {n, tool,
// args, result, started_at, touched} in order of n, from $first_step), each linked NEXT from the
// one before (the first from the stored step $first_step - 1, if any) and TOUCHED to the
// components of $touched it names. [] writes nothing. One row out: `recorded`, how many.
CALL {
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
