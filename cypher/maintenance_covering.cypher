// Whether a maintenance window covers an incident now (database clock): one that names any of
// $components (the incident's root cause, candidates and alerting components) or a team that
// owns one of them. When some do, the incident records them (IN_MAINTENANCE edges; with
// $message, the check before the page or a reopen's notice, each edge gets `held_at`: when
// that window first held this episode's message, a stamp older than the incident's latest
// reopen stamped again, so the message can say it was held: `_held_windows`) and
// `maintenance_until` becomes the latest end among them. `until`: that end, or null when no
// window covers it now; `held_until`: what the incident recorded before (null: never held);
// `reason`, `by`: one covering window's.
MATCH (i:Incident {id: $incident_id})
WITH i, i.maintenance_until AS held_until
CALL {
  UNWIND $components AS name
  OPTIONAL MATCH (:Component {name: name})<-[:OWNS]-(tm:Team)
  RETURN collect(DISTINCT tm.name) AS teams
}
OPTIONAL MATCH (m:Maintenance)
  WHERE m.ends_at > timestamp() AND m.starts_at <= timestamp()
    AND (any(c IN m.components WHERE c IN $components) OR any(t IN m.teams WHERE t IN teams))
FOREACH (_ IN CASE WHEN m IS NULL THEN [] ELSE [1] END |
  MERGE (i)-[r:IN_MAINTENANCE]->(m)
  SET r.held_at = CASE WHEN $message AND (r.held_at IS NULL
                                             OR r.held_at < coalesce(i.reopened_at, 0))
                       THEN timestamp() ELSE r.held_at END)
WITH i, held_until, max(m.ends_at) AS until, collect(m.reason)[0] AS reason,
     collect(m.by)[0] AS by
SET i.maintenance_until = CASE WHEN until IS NULL THEN i.maintenance_until ELSE until END
RETURN until, held_until, reason, by, i.status AS status
