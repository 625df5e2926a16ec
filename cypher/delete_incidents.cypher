// Archive, write side (gateway/ops/archive.py): the incidents $ids, already written to the archive
// file, leave the graph with their finding, tasks, steps, actions and alerts (an alert another
// incident still holds stays) and its text vector (`IncidentText`). Each must still pass the conditions of `archive_incidents`
// (resolved or merged, every task finished, no verdict, no playbook learned from it): one that
// changed in between stays, and is archived again later. Decisions stay (memory: which playbook
// was used, detached). Returns the ids deleted.
MATCH (i:Incident)
WHERE i.id IN $ids AND i.status IN ['resolved', 'merged']
  AND NOT (i)-[:HAS_VERDICT]->() AND NOT ()-[:LEARNED_FROM]->(i)
OPTIONAL MATCH (busy:Task)-[:FOR]->(i) WHERE NOT busy.status IN ['done', 'failed']
WITH i, count(busy) AS busy WHERE busy = 0
OPTIONAL MATCH (i)-[:HAS_ALERT]->(a:Alert)
OPTIONAL MATCH (other:Incident)-[:HAS_ALERT]->(a) WHERE NOT other.id IN $ids
WITH i, a, count(other) AS held
FOREACH (x IN CASE WHEN a IS NOT NULL AND held = 0 THEN [a] ELSE [] END | DETACH DELETE x)
WITH DISTINCT i
OPTIONAL MATCH (i)-[:HAS_FINDING]->(f:Finding)
FOREACH (x IN CASE WHEN f IS NULL THEN [] ELSE [f] END | DETACH DELETE x)
WITH DISTINCT i
OPTIONAL MATCH (t:Task)-[:FOR]->(i)
OPTIONAL MATCH (s:Step)-[:OF]->(t)
FOREACH (x IN CASE WHEN s IS NULL THEN [] ELSE [s] END | DETACH DELETE x)
WITH DISTINCT i, t
FOREACH (x IN CASE WHEN t IS NULL THEN [] ELSE [t] END | DETACH DELETE x)
WITH DISTINCT i
OPTIONAL MATCH (x:Action)-[:FOR]->(i)
FOREACH (y IN CASE WHEN x IS NULL THEN [] ELSE [x] END | DETACH DELETE y)
WITH DISTINCT i
OPTIONAL MATCH (x:IncidentText)-[:OF]->(i)
FOREACH (y IN CASE WHEN x IS NULL THEN [] ELSE [x] END | DETACH DELETE y)
WITH DISTINCT i
WITH i, i.id AS id
DETACH DELETE i
RETURN id
