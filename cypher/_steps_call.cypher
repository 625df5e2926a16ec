// A fragment, not a query: `cypher.load` puts it where a query says `// @include _steps_call`,
// after a fenced MATCH of the task `t` of `row`, the map of that task's fields (one row of a
// batch's $tasks, or the query's own parameters). It writes the run's deferred steps: row.steps
// (maps {n, tool, args, result, started_at, touched} in order of n, from row.first_step), each
// linked NEXT from the one before (the first from the stored step row.first_step - 1, if any)
// and TOUCHED to the components of row.touched it names. [] writes nothing. One row out per
// task: `recorded`, how many.
CALL {
  WITH t, row
  OPTIONAL MATCH (prev:Step {task_id: row.task_id, n: row.first_step - 1})
  // one lookup per name ('' matches none, so the walk goes on without one): `IN row.touched`
  // scanned every Component (only a parameter list is looked up in the index)
  UNWIND row.touched + [''] AS name
  OPTIONAL MATCH (c:Component {name: name})
  WITH t, row, prev, collect(c) AS components
  UNWIND range(0, size(row.steps) - 1) AS k
  WITH t, row, prev, components, k, row.steps[k] AS st
  CREATE (s:Step {task_id: row.task_id, n: st.n, tool: st.tool, args: st.args,
    result: st.result, started_at: st.started_at, at: timestamp(), epoch: row.epoch})-[:OF]->(t)
  WITH prev, components, k, st, s ORDER BY k
  WITH prev, components, collect(s) AS made, collect(st.touched) AS names
  UNWIND range(0, size(made) - 1) AS k
  WITH components, made[k] AS s, CASE WHEN k = 0 THEN prev ELSE made[k - 1] END AS before,
       names[k] AS near
  FOREACH (_ IN CASE WHEN before IS NULL THEN [] ELSE [1] END | CREATE (before)-[:NEXT]->(s))
  FOREACH (c IN [x IN components WHERE x.name IN near] | CREATE (s)-[:TOUCHED]->(c))
  RETURN count(s) AS recorded
}
