// A delivery of one new firing alert, in one query when it opens an incident: it reads what
// triage_context.cypher reads (same parameters, same parts), then decides here, by the rules of
// triage_alert.cypher, whether the alert opens a new incident, and if so writes it as
// triage_alert would (the Alert, its ON edge, the Incident with its page hold, the
// `investigate` task). `written` says whether it did; when not, it wrote nothing and triage
// goes on from the parts read, as after triage_context (a join, a merge, a flap, a stored key:
// triage_alert and the rest decide those). Writes to one graph are serialised, so the read and
// the write are atomic.
// It opens only when every one of these holds, each the condition under which triage_alert
// would: the key is not stored ($keys: [the key]; `known` empty); no open incident holds the
// alert's Alertmanager group with an alert on a component (`grouped` empty: else that group's
// components lend their links, `shared_dependencies`); its component, the first of $order
// (`component_candidates`, most specific label first) that names a matched component or is an
// alias of exactly one (two: Python's row order picks, so triage_alert decides), or none; no
// flapping (the earlier episode triage_alert's `flap` finds); no open incident opened within
// $window_ms of $starts_at_ms ([$from_ms, $to_ms]) holding a component within $reach hops of
// it (or, with no component, holding its non-empty group key). The page is held
// (`hold_until`) when an open incident of that window holds a component past $reach but
// within $hops (its `beyond`). $hops is min(6, 2 * $reach), as triage passes both queries.
// The flap is looked up from the fingerprint's alerts and the window's incidents through the
// opened_at index, not by a pass over every incident as in triage_alert: the same rows.
// @include _triage_read
WITH matched, grouped, links, known, open, refired, episodes,
     [n IN $order WHERE any(m IN matched WHERE m.name = n OR n IN coalesce(m.aliases, []))] AS named
WITH matched, grouped, links, known, open, refired, episodes,
     CASE WHEN size(named) = 0 THEN []
          WHEN any(m IN matched WHERE m.name = named[0]) THEN [named[0]]
          ELSE [m IN matched WHERE named[0] IN coalesce(m.aliases, []) | m.name] END AS owners
WITH matched, grouped, links, known, open, refired, episodes,
     size(owners) <= 1 AND size(known) = 0 AND size(grouped) = 0 AS plain,
     CASE WHEN size(owners) = 1 THEN owners[0] END AS component
WITH matched, grouped, links, known, open, refired, episodes, plain, component,
     [l IN links WHERE l.origin = component AND l.hops <= $reach | l.name] AS near
WITH matched, grouped, links, known, open, refired, episodes, plain, component, near,
     [l IN links WHERE l.origin = component AND l.hops > $reach AND NOT l.name IN near
      | l.name] AS beyond
CALL {  // triage_alert's `flap`, for a new key, from the fingerprint's few alerts
  WITH plain
  OPTIONAL MATCH (old:Alert {fingerprint: $fingerprint}) WHERE plain AND $reopen_ms > 0
  OPTIONAL MATCH (old)<-[:HAS_ALERT]-(flap:Incident)
    WHERE $starts_at_ms >= flap.opened_at
      AND ((flap.status = 'open' AND flap.reopened_at >= timestamp() - $reopen_ms)
        OR (flap.status = 'resolved' AND flap.resolved_at IS NOT NULL
            AND $starts_at_ms <= flap.resolved_at + $reopen_ms))
  RETURN count(flap) AS flaps
}
// triage_alert's `cand` and `far` in one pass over the open incidents of the window (by the
// opened_at index: the incidents of the window, not every open one)
CALL {
  WITH plain, near, beyond
  OPTIONAL MATCH (o:Incident)
    WHERE plain AND o.opened_at >= $from_ms AND o.opened_at <= $to_ms AND o.status = 'open'
  RETURN sum(CASE WHEN (size(near) > 0 AND any(x IN o.components WHERE x IN near))
                      OR (size(near) = 0 AND $group_key <> '' AND $group_key IN o.group_keys)
                    THEN 1 ELSE 0 END) AS joins,
         sum(CASE WHEN $hold_ms > 0 AND any(x IN o.components WHERE x IN beyond)
                    THEN 1 ELSE 0 END) AS fars
}
WITH matched, grouped, links, known, open, refired, episodes, component,
     plain AND flaps = 0 AND joins = 0 AS ok, fars > 0 AS held
CALL {
  WITH ok, component, held
  UNWIND CASE WHEN ok THEN [1] ELSE [] END AS go
  OPTIONAL MATCH (c:Component {name: coalesce(component, '')})  // a null lookup scans
  CREATE (a:Alert {key: $key, fingerprint: $fingerprint, alertname: $alertname,
    severity: $severity, status: $status, starts_at: $starts_at, starts_at_ms: $starts_at_ms,
    ends_at_ms: $ends_at_ms, labels_json: $labels_json, annotations_json: $annotations_json,
    values_json: $values_json, generator_url: $generator_url, link: $link,
    group_key: $group_key, receiver: $receiver, source: $source, title: $title,
    silence_url: $silence_url, received_at: timestamp(), component: component})
  CREATE (i:Incident {id: $new_incident_id, status: 'open', severity: $severity,
    severity_rank: $severity_rank, title: $title, opened_at: $starts_at_ms,
    received_at: timestamp(), group_keys: [$group_key], firing: 1,
    components: CASE WHEN component IS NULL THEN [] ELSE [component] END,
    hold_until: CASE WHEN held THEN timestamp() + $hold_ms ELSE 0 END})-[:HAS_ALERT]->(a)
  CREATE (:Task {id: $new_task_id, kind: 'investigate', incident_id: $new_incident_id,
// @include _fresh_task
})-[:FOR]->(i)
  FOREACH (_ IN CASE WHEN c IS NULL THEN [] ELSE [1] END | CREATE (a)-[:ON]->(c))
}
// `links` only when nothing was written: triage goes on from them then, and a written alert
// needs none (up to dozens of maps with paths per reply, built here and parsed by the gateway).
RETURN matched, grouped, CASE WHEN ok THEN [] ELSE links END AS links, known, open, refired,
       episodes, ok AS written
