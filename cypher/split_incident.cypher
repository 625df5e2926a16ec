// Split the firing alerts $keys, which the incident's root cause does not explain, into a new
// incident with its own `investigate` task (so its own page and ticket), fenced by the
// investigator's task. The original incident keeps $kept_components and the cause $keep_cause;
// when $keep_summary is not null the finding is set back to that cause (a cause once paged is
// never silently replaced). Its finding's `alerts_seen` drops to $kept_alerts, and a
// `reinvestigate` task recomputes it from the alerts it kept. New alerts' edges say where they
// came from (`via`); (new)-[:SPLIT_FROM]->(old) records the split.
MATCH (t:Task {id: $task_id})-[:FOR]->(old:Incident {id: $incident_id})
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = $epoch AND t.lease_until >= timestamp()
MATCH (old)-[h:HAS_ALERT]->(a:Alert) WHERE a.key IN $keys AND a.status = 'firing'
WITH old, collect(h) AS edges, collect(a) AS moved
WHERE size(moved) > 0
CREATE (new:Incident {id: $new_incident_id, status: 'open', severity: $severity,
  severity_rank: $severity_rank, title: $title, opened_at: $opened_at, received_at: timestamp(),
  group_keys: $group_keys, firing: size(moved), components: $components, split_from: old.id})
CREATE (new)-[:SPLIT_FROM]->(old)
CREATE (:Task {id: $new_task_id, kind: 'investigate', incident_id: $new_incident_id,
// @include _fresh_task
})-[:FOR]->(new)
FOREACH (h IN edges | DELETE h)
FOREACH (a IN moved | CREATE (new)-[:HAS_ALERT {via: 'split from ' + old.id + ': ' + $why}]->(a))
SET old.firing = coalesce(old.firing, 0) - size(moved), old.components = $kept_components
WITH old, new, moved
SET old.status = CASE WHEN old.firing <= 0 THEN 'resolved' ELSE old.status END,
    old.resolved_at = CASE WHEN old.firing <= 0 THEN timestamp() ELSE old.resolved_at END
MERGE (r:Task {id: 'reinvestigate:' + old.id + ':split:' + new.id})
  ON CREATE SET r += {kind: 'reinvestigate', incident_id: old.id,
// @include _fresh_task
}
MERGE (r)-[:FOR]->(old)
WITH old, new, moved
OPTIONAL MATCH (old)-[:HAS_FINDING]->(f:Finding)
OPTIONAL MATCH (f)-[s:SUPPORTED_BY]->(x:Alert) WHERE x.key IN [m IN moved | m.key]
WITH old, new, f, collect(s) AS cited
FOREACH (s IN cited | DELETE s)
SET f.alerts_seen = $kept_alerts
WITH old, new, f
OPTIONAL MATCH (old)-[imp:IMPACTED]->(gone:Component) WHERE NOT gone.name IN $kept_components
WITH old, new, f, collect(imp) AS stale
FOREACH (imp IN stale | DELETE imp)
WITH old, new, f
OPTIONAL MATCH (old)-[rc:ROOT_CAUSE]->(was:Component)
  WHERE $keep_summary IS NOT NULL AND was.name <> $keep_cause
WITH old, new, f, collect(rc) AS replaced
FOREACH (rc IN replaced | DELETE rc)
WITH old, new, f
OPTIONAL MATCH (kept:Component {name: $keep_cause}) WHERE $keep_summary IS NOT NULL
FOREACH (_ IN CASE WHEN kept IS NULL THEN [] ELSE [1] END |
  MERGE (old)-[:ROOT_CAUSE]->(kept)
  SET old.root_cause = $keep_cause, old.conclusive = true, f.root_cause = $keep_cause,
      f.conclusive = true, f.candidates = [$keep_cause], f.summary = $keep_summary)
RETURN new.id AS incident_id, old.status AS status
