// Archive, read side (gateway/ops/archive.py): up to $limit incidents resolved (or merged) before
// $before_ms (ms since the epoch) that nothing still needs in the graph: every task finished
// (no worker holds or will claim one), no verdict and no playbook learned from them (memory
// points at those, so they stay). Oldest first, each whole as property maps: the incident, its
// finding (or null), its alerts, its actions, and its tasks as [task, [steps]] pairs.
// `delete_incidents` then removes them, with the same conditions checked again.
MATCH (i:Incident)
WHERE i.status IN ['resolved', 'merged'] AND coalesce(i.resolved_at, i.opened_at) < $before_ms
  AND NOT (i)-[:HAS_VERDICT]->() AND NOT ()-[:LEARNED_FROM]->(i)
OPTIONAL MATCH (busy:Task)-[:FOR]->(i) WHERE NOT busy.status IN ['done', 'failed']
WITH i, count(busy) AS busy WHERE busy = 0
WITH i ORDER BY coalesce(i.resolved_at, i.opened_at), i.id LIMIT $limit
OPTIONAL MATCH (i)-[:HAS_FINDING]->(f:Finding)
WITH i, f
OPTIONAL MATCH (i)-[:HAS_ALERT]->(a:Alert)
WITH i, f, collect(properties(a)) AS alerts
OPTIONAL MATCH (x:Action)-[:FOR]->(i)
WITH i, f, alerts, collect(properties(x)) AS actions
OPTIONAL MATCH (t:Task)-[:FOR]->(i)
OPTIONAL MATCH (s:Step)-[:OF]->(t)
WITH i, f, alerts, actions, t, s ORDER BY s.n
WITH i, f, alerts, actions, t, collect(properties(s)) AS steps
WITH i, f, alerts, actions,
     collect(CASE WHEN t IS NULL THEN null ELSE [properties(t), steps] END) AS tasks
RETURN properties(i) AS incident, properties(f) AS finding, alerts, actions, tasks
ORDER BY coalesce(incident.resolved_at, incident.opened_at), incident.id
