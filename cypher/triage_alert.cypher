// Upsert one alert episode (key = fingerprint@startsAt) and attach it to an incident, atomically.
// Writes to one graph are serialised, so concurrent or repeated deliveries of the same alert
// cannot create two alerts or two incidents. A stale 'firing' after 'resolved' changes nothing.
// A resolved alert only closes what fired: one never stored firing (a new key arriving
// resolved) is recorded in no incident (`incident_id` null): it joins, opens and clears
// nothing, and a resend or a stale 'firing' of it later changes nothing either.
// An alert on a component new to an open incident enqueues a `reinvestigate` task (one on a
// component it has already gets one from `settle_reinvestigations`, once per delivery).
// Per-alert cost stays flat in an alert storm: the new alert's edge is created (not merged: it
// has no incident yet), and the incident keeps a count of its firing alerts (`firing`: +1 when
// a firing alert joins, -1 when one resolves) instead of counting them on every delivery.
// $near: components linked to this alert's component by a dependency path within the
// correlation reach, either way (empty if unmatched), shortest first; $near_hops / $near_paths:
// each one's distance and path text; $down: those of them it depends on (a cause among them
// explains this alert). An alert joins an open incident only when one of the incident's
// components is in $near; the path (or the shared groupKey) is kept on the edge as `via`.
OPTIONAL MATCH (old:Alert {key: $key})
WITH old.status AS prev
MERGE (a:Alert {key: $key})
  ON CREATE SET a.fingerprint = $fingerprint, a.alertname = $alertname, a.severity = $severity,
    a.status = $status, a.starts_at = $starts_at, a.starts_at_ms = $starts_at_ms,
    a.ends_at_ms = $ends_at_ms, a.labels_json = $labels_json,
    a.annotations_json = $annotations_json, a.values_json = $values_json,
    a.generator_url = $generator_url, a.link = $link, a.group_key = $group_key,
    a.receiver = $receiver, a.source = $source, a.title = $title, a.silence_url = $silence_url,
    a.received_at = timestamp(), a.component = $component
WITH a, prev, (prev = 'firing' AND $status = 'resolved') AS resolving
SET a.status = CASE WHEN resolving THEN 'resolved' ELSE a.status END,
    a.ends_at_ms = CASE WHEN resolving THEN $ends_at_ms ELSE a.ends_at_ms END,
    a.annotations_json = CASE WHEN prev = 'firing' THEN $annotations_json ELSE a.annotations_json END
WITH a, prev, resolving
OPTIONAL MATCH (c:Component {name: coalesce($component, '')})  // null: an unknown component; a null lookup scans
FOREACH (_ IN CASE WHEN prev IS NULL AND c IS NOT NULL THEN [1] ELSE [] END | MERGE (a)-[:ON]->(c))
WITH a, prev, resolving
OPTIONAL MATCH (a)<-[:HAS_ALERT]-(cur:Incident)
WITH a, prev, resolving, cur, cur IS NULL AND a.status = 'resolved' AS unfired
// Flapping: a new firing episode of an alert (same fingerprint) of an incident that resolved at
// most $reopen_ms before it started reopens that incident, and one of an incident another
// alert of its group reopened at most $reopen_ms ago (database clock) joins it, before any
// other choice: the same alert, the same incident, the same thread, no new page. An incident
// that simply stayed open keeps the usual rules (a week-old one must not absorb a new episode).
// $reopen_ms 0: never.
OPTIONAL MATCH (:Alert {fingerprint: $fingerprint})<-[:HAS_ALERT]-(flap:Incident)
  WHERE cur IS NULL AND prev IS NULL AND $status = 'firing' AND $reopen_ms > 0
    AND $starts_at_ms >= flap.opened_at
    AND ((flap.status = 'open' AND flap.reopened_at >= timestamp() - $reopen_ms)
      OR (flap.status = 'resolved' AND flap.resolved_at IS NOT NULL
          AND $starts_at_ms <= flap.resolved_at + $reopen_ms))
WITH a, prev, resolving, cur, unfired, flap ORDER BY flap.status = 'open' DESC, flap.opened_at DESC LIMIT 1
OPTIONAL MATCH (cand:Incident {status: 'open'})
  WHERE cur IS NULL AND NOT unfired AND flap IS NULL
    AND cand.opened_at >= $starts_at_ms - $window_ms AND cand.opened_at <= $starts_at_ms + $window_ms
    AND ((size($near) > 0 AND any(x IN cand.components WHERE x IN $near))
      OR (size($near) = 0 AND $group_key <> '' AND $group_key IN cand.group_keys))
WITH a, prev, resolving, cur, unfired, flap, cand,
     CASE WHEN cand IS NULL OR size($near) = 0 THEN [] ELSE
       [n IN range(0, size($near) - 1) WHERE $near[n] IN cand.components] END AS hits
WITH a, prev, resolving, cur, unfired, flap, cand,
     CASE WHEN cand IS NULL THEN ''
          WHEN size(hits) = 0 THEN 'same Alertmanager group ' + $group_key
          ELSE $near_paths[hits[0]] END AS via,
     CASE WHEN cand IS NOT NULL AND cand.root_cause IN $down THEN 0 ELSE 1 END AS unexplained,
     CASE WHEN size(hits) = 0 THEN 0 ELSE $near_hops[hits[0]] END AS distance
// ties (incidents opened in the same ms) go to the lowest id, as `triage_join` and
// `triage_join_group` rank them: else no batch could ever be sure where an alert goes
WITH a, prev, resolving, cur, unfired, flap, cand, via ORDER BY unexplained, distance, cand.opened_at, cand.id LIMIT 1
// A new incident with an open one past the reach but within twice it ($beyond) holds its
// page until `hold_until` (ms): an alert between the two may still come and merge them.
OPTIONAL MATCH (far:Incident {status: 'open'})
  WHERE cur IS NULL AND NOT unfired AND cand IS NULL AND flap IS NULL AND $hold_ms > 0 AND size($beyond) > 0
    AND far.opened_at >= $starts_at_ms - $window_ms AND far.opened_at <= $starts_at_ms + $window_ms
    AND any(x IN far.components WHERE x IN $beyond)
WITH a, prev, resolving, cur, unfired, flap, cand, via, count(far) > 0 AS held,
     flap IS NOT NULL AND flap.status = 'resolved' AS reopening
FOREACH (_ IN CASE WHEN cur IS NULL AND flap IS NOT NULL THEN [1] ELSE [] END |
  CREATE (flap)-[:HAS_ALERT {via: CASE WHEN reopening THEN 'fired again within the reopen window'
                                       ELSE 'the same alert fired again' END}]->(a)
  SET flap.firing = coalesce(flap.firing, 0) + 1)
FOREACH (_ IN CASE WHEN cur IS NULL AND reopening THEN [1] ELSE [] END |
  SET flap.status = 'open', flap.resolved_at = null, flap.resolved_by = null,
      flap.reopened_at = timestamp(),
      flap.reopens = coalesce(flap.reopens, 0) + 1
  MERGE (r:Task {id: 'reopened:' + a.key})
    ON CREATE SET r += {kind: 'notify_reopened', incident_id: flap.id, alert_key: a.key,
// @include _fresh_task
}
  MERGE (r)-[:FOR]->(flap))
FOREACH (_ IN CASE WHEN cur IS NULL AND NOT unfired AND cand IS NULL AND flap IS NULL THEN [1]
                    ELSE [] END |
  CREATE (i:Incident {id: $new_incident_id, status: 'open', severity: $severity,
    severity_rank: $severity_rank, title: $title, opened_at: $starts_at_ms, received_at: timestamp(),
    group_keys: [$group_key], firing: CASE WHEN $status = 'firing' THEN 1 ELSE 0 END,
    components: CASE WHEN $component IS NULL THEN [] ELSE [$component] END,
    hold_until: CASE WHEN held THEN timestamp() + $hold_ms ELSE 0 END})-[:HAS_ALERT]->(a)
  CREATE (:Task {id: $new_task_id, kind: 'investigate', incident_id: $new_incident_id,
// @include _fresh_task
})-[:FOR]->(i))
FOREACH (_ IN CASE WHEN cur IS NULL AND cand IS NOT NULL AND $component IS NOT NULL
                    AND NOT $component IN cand.components THEN [1] ELSE [] END |
  MERGE (r:Task {id: 'reinvestigate:' + cand.id + ':' + $component})
    ON CREATE SET r += {kind: 'reinvestigate', incident_id: cand.id,
// @include _fresh_task
}
  MERGE (r)-[:FOR]->(cand))
FOREACH (_ IN CASE WHEN cur IS NULL AND cand IS NOT NULL THEN [1] ELSE [] END |
  CREATE (cand)-[:HAS_ALERT {via: via}]->(a)
  SET cand.firing = coalesce(cand.firing, 0) + CASE WHEN $status = 'firing' THEN 1 ELSE 0 END,
      cand.components = CASE WHEN $component IS NULL OR $component IN cand.components
                             THEN cand.components ELSE cand.components + [$component] END,
      cand.group_keys = CASE WHEN $group_key IN cand.group_keys THEN cand.group_keys
                             ELSE cand.group_keys + [$group_key] END,
      cand.severity = CASE WHEN $severity_rank > cand.severity_rank THEN $severity ELSE cand.severity END,
      cand.severity_rank = CASE WHEN $severity_rank > cand.severity_rank THEN $severity_rank
                                ELSE cand.severity_rank END)
WITH a, prev, resolving, cur IS NULL AND NOT unfired AND cand IS NULL AND flap IS NULL AS opened,
     cur IS NULL AND reopening AS reopened
OPTIONAL MATCH (inc:Incident)-[:HAS_ALERT]->(a)
// FOREACH over [inc]: a SET on the null `inc` of an unfired alert is an error (FalkorDB 4.16)
FOREACH (i IN CASE WHEN resolving AND inc IS NOT NULL THEN [inc] ELSE [] END |
  SET i.firing = coalesce(i.firing, 0) - 1)
WITH a, prev, resolving, opened, reopened, inc,
     (inc IS NOT NULL AND a.status = 'resolved' AND inc.firing <= 0 AND inc.status <> 'resolved')
       AS closing,
     (resolving AND inc IS NOT NULL) AS cleared
FOREACH (i IN CASE WHEN closing THEN [inc] ELSE [] END |
  SET i.status = 'resolved', i.resolved_at = coalesce(a.ends_at_ms, timestamp()))
FOREACH (_ IN CASE WHEN cleared THEN [1] ELSE [] END |
  MERGE (t:Task {id: 'cleared:' + a.key})
    ON CREATE SET t += {kind: 'notify_cleared', incident_id: inc.id, alert_key: a.key,
// @include _fresh_task
}
  MERGE (t)-[:FOR]->(inc))
RETURN a.key AS key, prev, a.status AS status, inc.id AS incident_id, opened, reopened, closing,
       cleared
