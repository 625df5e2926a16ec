// A fragment, not a query: `cypher.load` puts it where a query says `// @include _steps_call`,
// after a fenced MATCH of the task `t` of `row`, the map of that task's fields (one row of a
// batch's $tasks, or the query's own parameters). It writes the run's deferred steps: row.steps
// (maps {n, tool, args, result, started_at, touched} in order of n, from row.first_step), each
// linked NEXT from the one before (the first from the stored step row.first_step - 1, if any)
// and TOUCHED to the components of row.touched it names. [] writes nothing. One row out per
// task: `recorded`, how many.
// Only small values pass the sort and the grouping (a step's number, its touched names, the
// nodes): grouping by `row` (its steps' results, several KiB) and sorting whole steps made
// write_finding of a batch of 8 calm investigations take 5.9-7.7 ms in FalkorDB, 4.7-5.1 ms
// so (the same steps, NEXT and TOUCHED edges written; measured on copies of one graph).
CALL {
  WITH t, row
  // one lookup per name ('' matches none, so the walk goes on without one): `IN row.touched`
  // scanned every Component (only a parameter list is looked up in the index)
  CALL {
    WITH row
    UNWIND row.touched + [''] AS name
    OPTIONAL MATCH (c:Component {name: name})
    RETURN collect(c) AS components
  }
  OPTIONAL MATCH (prev:Step {task_id: row.task_id, n: row.first_step - 1})
  UNWIND row.steps AS st
  CREATE (s:Step {task_id: row.task_id, n: st.n, tool: st.tool, args: st.args,
    result: st.result, started_at: st.started_at, at: timestamp(), epoch: row.epoch})-[:OF]->(t)
  WITH prev, components, st.n AS n, st.touched AS near, s ORDER BY n
  WITH prev, components, collect(s) AS made, collect(near) AS names
  UNWIND range(0, size(made) - 1) AS k
  WITH components, made[k] AS s, CASE WHEN k = 0 THEN prev ELSE made[k - 1] END AS before,
       names[k] AS near
  FOREACH (_ IN CASE WHEN before IS NULL THEN [] ELSE [1] END | CREATE (before)-[:NEXT]->(s))
  FOREACH (c IN [x IN components WHERE x.name IN near] | CREATE (s)-[:TOUCHED]->(c))
  RETURN count(s) AS recorded
}
