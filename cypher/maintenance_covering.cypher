// Whether maintenance windows cover an incident now (database clock). They do when one names
// its root cause ($cause, a component or null) or a team that owns it, or when every one of its
// alerting components ($alerting) is named by some window, or owned by a team one names. A
// window over one of several alerting components, or over a candidate the finding only lists
// to check, covers nothing: as an Alertmanager silence silences alerts and not the groups they
// are in, an outage on a component no window names is paged. When windows cover it, the
// incident records those that do (IN_MAINTENANCE edges; with $message, the check before the
// page or a reopen's notice, each edge gets `held_at`: when that window first held this
// episode's message, a stamp older than the incident's latest reopen stamped again, so the
// message can say it was held: `_held_windows`) and `maintenance_until` becomes `until`.
// `until`: when the cover ends (by the cause: its latest window's end; by the alerting
// components: the earliest among them of each one's latest window's end, as from then one of
// them is named by none; the later of the two), or null when nothing covers it now;
// `held_until`: what the incident recorded before (null: never held); `reason`, `by`: one
// covering window's.
MATCH (i:Incident {id: $incident_id})
WITH i, i.maintenance_until AS held_until
OPTIONAL MATCH (m:Maintenance)
  WHERE m.ends_at > timestamp() AND m.starts_at <= timestamp()
WITH i, held_until, collect(m) AS active
CALL {
  WITH active
  UNWIND CASE WHEN size(active) = 0 THEN [] ELSE $names END AS name
  OPTIONAL MATCH (:Component {name: name})<-[:OWNS]-(tm:Team)
  WITH active, name, collect(tm.name) AS teams
  WITH name, [w IN active WHERE name IN w.components OR any(t IN w.teams WHERE t IN teams)]
    AS windows
  RETURN collect({name: name, windows: windows,
                  until: reduce(e = 0, w IN windows |
                                CASE WHEN w.ends_at > e THEN w.ends_at ELSE e END)}) AS names
}
WITH i, held_until,
     [n IN names WHERE n.name = $cause AND size(n.windows) > 0] AS by_cause,
     [n IN names WHERE n.name IN $alerting] AS alerting
WITH i, held_until, by_cause,
     CASE WHEN size($alerting) > 0 AND size(alerting) = size($alerting)
               AND all(n IN alerting WHERE size(n.windows) > 0)
          THEN alerting ELSE [] END AS alerting
WITH i, held_until, by_cause + alerting AS covers,
     CASE WHEN size(by_cause) = 0 THEN null ELSE by_cause[0].until END AS cause_until,
     reduce(u = null, n IN alerting | CASE WHEN u IS NULL OR n.until < u THEN n.until ELSE u END)
       AS alerting_until
WITH i, held_until, reduce(all_windows = [], n IN covers | all_windows + n.windows) AS windows,
     CASE WHEN cause_until IS NULL THEN alerting_until
          WHEN alerting_until IS NULL OR cause_until > alerting_until THEN cause_until
          ELSE alerting_until END AS until
UNWIND CASE WHEN size(windows) = 0 THEN [null] ELSE windows END AS m
WITH DISTINCT i, held_until, until, m  // a window naming two of the components comes twice
FOREACH (_ IN CASE WHEN m IS NULL THEN [] ELSE [1] END |
  MERGE (i)-[r:IN_MAINTENANCE]->(m)
  SET r.held_at = CASE WHEN $message AND (r.held_at IS NULL
                                             OR r.held_at < coalesce(i.reopened_at, 0))
                       THEN timestamp() ELSE r.held_at END)
WITH i, held_until, until, collect(m.reason)[0] AS reason, collect(m.by)[0] AS by
SET i.maintenance_until = CASE WHEN until IS NULL THEN i.maintenance_until ELSE until END
RETURN until, held_until, reason, by, i.status AS status
