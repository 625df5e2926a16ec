// Retention (agents/learn/retention.py): up to $limit incidents resolved (or merged) before $before_ms
// (ms since the epoch) and not trimmed yet lose their bulky fields: their alerts' labels,
// annotations and values become empty and their source links go; their finding's paths and
// ruled-out candidates go (summary, confidence, candidates and evidence stay: recall and the
// learner read those); their finished tasks' steps (each a node with its stored result and
// TOUCHED edges: most of an old incident's memory) are deleted, except the respond steps that say
// who was paged (`response_context`, `route_new_cause`), which the incident's page shows; and
// their finished investigations and cleared notices (tasks whose ids are random or made from an
// alert that has already resolved, so nothing re-creates them) are deleted with them: every node
// costs its index entries. Cause, verdicts, actions, the respond tasks and the alerts themselves
// stay, so memory (past incidents, the previous ticket, verdicts) still works. Selected first,
// then written (LIMIT does not limit an eager write, FalkorDB 4.16). Returns the ids trimmed.
MATCH (i:Incident)
WHERE i.status IN ['resolved', 'merged'] AND i.trimmed_at IS NULL
  AND coalesce(i.resolved_at, i.opened_at) < $before_ms
WITH i ORDER BY coalesce(i.resolved_at, i.opened_at) LIMIT $limit
SET i.trimmed_at = timestamp()
WITH i
OPTIONAL MATCH (i)-[:HAS_ALERT]->(a:Alert)
FOREACH (_ IN CASE WHEN a IS NULL THEN [] ELSE [1] END |
  SET a.labels_json = '{}', a.annotations_json = '{}', a.values_json = 'null',
      a.generator_url = '', a.link = NULL)
WITH DISTINCT i
OPTIONAL MATCH (i)-[:HAS_FINDING]->(f:Finding)
FOREACH (_ IN CASE WHEN f IS NULL THEN [] ELSE [1] END |
  SET f.paths_json = NULL, f.ruled_out_json = NULL)
WITH DISTINCT i
OPTIONAL MATCH (t:Task)-[:FOR]->(i) WHERE t.status IN ['done', 'failed']
OPTIONAL MATCH (s:Step)-[:OF]->(t) WHERE NOT s.tool IN ['response_context', 'route_new_cause']
FOREACH (_ IN CASE WHEN s IS NULL THEN [] ELSE [1] END | DETACH DELETE s)
WITH DISTINCT i
OPTIONAL MATCH (t:Task)-[:FOR]->(i)
WHERE t.status IN ['done', 'failed'] AND t.kind IN ['investigate', 'reinvestigate', 'notify_cleared']
FOREACH (_ IN CASE WHEN t IS NULL THEN [] ELSE [1] END | DETACH DELETE t)
WITH DISTINCT i
RETURN i.id AS id
