// Everything the responder needs to page for an incident, in one round trip, for each incident
// of $incident_ids (a worker's batch: agents/tasks/worker.py; one row each, none for an
// incident that is gone): the
// columns of `response_incident` (incident, finding, `alerts`), and as lists of maps:
// `owners` (rows of `response_context` for the root cause, the candidates and the alerting
// components), `fallback` (the `default_route` row, or empty), `cited` (`incident_changes`),
// `recent` (`recent_changes` of those components in [opened_at - $lookback_ms, opened_at]),
// `change_source` (whether any Change was ever recorded: false, `recent` measured nothing),
// `actions` (`incident_actions`), `steps` (the investigations' steps), `previous` (the latest
// earlier incident with an alert of the same fingerprint, and its ticket; or empty) and
// `preferences` (the approved, current preferences of every person in `owners` and `fallback`,
// any failure kind); `hold_ms`, how much longer the page is held (triage_alert), <= 0 when
// not; `quiet_until`, the end of the latest maintenance window covering it now (null: none)
// and `maintenance_until`, what the incident recorded (null: never held); each team row has its
// `escalation_policy_json`; `early_page`, the status of the incident's `page` task (the page
// sent before a late diagnosis: agents/tasks/kinds.py, `page_due`), null when it has none.
// Only when it has one (what `Responder._cause_found` edits into that page), else []: `paged`
// (the `incident_paged` row: whom the page names now), `verdicts` (`incident_verdicts`) and
// `refused` (the page's `incident_deliveries` whose outcome is `refused`, with `n`). `held`: the ended
// windows that held the page (`_held_windows`), which it then says. `heartbeat` and `last_seen`:
// the alertname and last arrival (ms) of a heartbeat whose silence this incident is, else null.
// Lists come unordered: the caller sorts.
// Read only; every part is a subquery that returns one row (collect), so an empty part is [].
// Every lookup starts from an index (a name, a fingerprint, a person), never from a scan of a
// label that grows with history or the world (`tests/test_query_plans.py`); a lookup value that
// may be null is coalesced to '' (an index lookup of null scans the whole label).
UNWIND $incident_ids AS incident_id
MATCH (i:Incident {id: incident_id})
OPTIONAL MATCH (i)-[:HAS_FINDING]->(f:Finding)
CALL {
  WITH i
  OPTIONAL MATCH (i)-[h:HAS_ALERT]->(a:Alert)
  OPTIONAL MATCH (a)-[:ON]->(c:Component)
  RETURN collect(CASE WHEN a IS NULL THEN null ELSE {
       key: a.key, fingerprint: a.fingerprint, alertname: a.alertname, status: a.status,
       severity: a.severity, starts_at: a.starts_at, starts_at_ms: a.starts_at_ms,
       ends_at_ms: a.ends_at_ms, labels_json: a.labels_json, annotations_json: a.annotations_json,
       values_json: a.values_json, generator_url: a.generator_url, link: a.link, title: a.title,
       source: a.source, group_key: a.group_key, component: c.name, via: h.via,
       silence_url: a.silence_url} END) AS alerts,
       collect(DISTINCT c.name) AS alerting
}
WITH i, f, alerts,
     CASE WHEN i.root_cause IS NULL THEN [] ELSE [i.root_cause] END + coalesce(f.candidates, [])
       + alerting AS components
CALL {
  WITH components
  UNWIND components AS each
  WITH DISTINCT each AS name  // the root cause is usually a candidate and alerting too
  OPTIONAL MATCH (tm:Team)-[o:OWNS]->(c:Component {name: name})
  OPTIONAL MATCH (s:OnCallShift)-[:FOR_TEAM]->(tm)
    WHERE s.starts_at <= timestamp() AND timestamp() < s.ends_at
  OPTIONAL MATCH (s)-[:ON_CALL]->(p:Person)
  RETURN collect(CASE WHEN tm IS NULL THEN null ELSE {
       component: c.name, team: tm.name, channel: tm.slack_channel, escalation: tm.escalation,
       person: p.name, email: p.email, slack_user_id: p.slack_user_id,
       shift_ends_at: s.ends_at, escalation_policy_json: tm.escalation_policy_json,
       by_world_file: any(x IN coalesce(o.sources, []) WHERE x STARTS WITH 'world:')} END) AS owners
}
CALL {
  OPTIONAL MATCH (tm:Team {is_default: true})
  OPTIONAL MATCH (s:OnCallShift)-[:FOR_TEAM]->(tm)
    WHERE s.starts_at <= timestamp() AND timestamp() < s.ends_at
  OPTIONAL MATCH (s)-[:ON_CALL]->(p:Person)
  WITH tm, s, p ORDER BY p IS NULL, p.name LIMIT 1
  RETURN collect(CASE WHEN tm IS NULL THEN null ELSE {
       team: tm.name, channel: tm.slack_channel, escalation: tm.escalation, person: p.name,
       email: p.email, slack_user_id: p.slack_user_id, shift_ends_at: s.ends_at,
       escalation_policy_json: tm.escalation_policy_json} END) AS fallback
}
CALL {
  WITH f  // the finding matched above: not looked up again
  OPTIONAL MATCH (f)-[:SUPPORTED_BY]->(ch:Change)-[:MODIFIES]->(c:Component)
  RETURN collect(CASE WHEN ch IS NULL THEN null ELSE {
       kind: ch.kind, ref: ch.ref, at: ch.at, component: c.name} END) AS cited
}
CALL {
  WITH i, components
  OPTIONAL MATCH (ch:Change)-[:MODIFIES]->(c:Component)
  WHERE c.name IN components AND ch.at >= i.opened_at - $lookback_ms AND ch.at <= i.opened_at
  RETURN collect(CASE WHEN ch IS NULL THEN null ELSE {
       id: ch.id, component: c.name, kind: ch.kind, ref: ch.ref, at: ch.at,
       author: ch.author} END) AS recent
}
// @include _change_source
CALL {
  WITH i
  OPTIONAL MATCH (a:Action)-[:FOR]->(i)
  RETURN collect(CASE WHEN a IS NULL THEN null ELSE {
       intent_id: a.intent_id, kind: a.kind, status: a.status, adapter: a.adapter,
       external_ref: a.external_ref, reserved_at: a.reserved_at} END) AS actions
}
CALL {
  WITH i
  OPTIONAL MATCH (t:Task)-[:FOR]->(i) WHERE t.kind IN ['investigate', 'reinvestigate']
  OPTIONAL MATCH (s:Step)-[:OF]->(t)
  RETURN collect(CASE WHEN s IS NULL THEN null ELSE {
       task_id: t.id, kind: t.kind, created_at: t.created_at, n: s.n, tool: s.tool,
       args: s.args, result: s.result, at: s.at} END) AS steps
}
CALL {
  WITH i, alerts
  // The fingerprints of the alerts read above, not a second traversal of HAS_ALERT (each
  // traversal costs FalkorDB about 0.1 ms a batch); '' for an incident with no alert (a silent
  // heartbeat's): a lookup of null fails. Two clauses, so the planner starts from the
  // fingerprint index: in one, it scanned every earlier incident on the opened_at index instead.
  UNWIND CASE WHEN size(alerts) = 0 THEN [''] ELSE [x IN alerts | coalesce(x.fingerprint, '')] END
    AS fingerprint
  WITH i, fingerprint
  OPTIONAL MATCH (same:Alert {fingerprint: fingerprint})
  OPTIONAL MATCH (same)<-[:HAS_ALERT]-(p:Incident)
  WHERE p.id <> i.id AND p.opened_at <= i.opened_at
  WITH DISTINCT p
  OPTIONAL MATCH (t:Action {kind: 'ticket', status: 'sent'})-[:FOR]->(p)
  WITH p, t.external_ref AS ticket_ref
  ORDER BY p IS NULL, p.opened_at DESC, p.id LIMIT 1
  RETURN collect(CASE WHEN p IS NULL THEN null ELSE {
       id: p.id, status: p.status, opened_at: p.opened_at, resolved_at: p.resolved_at,
       root_cause: p.root_cause, ticket_ref: ticket_ref} END) AS previous
}
CALL {
  WITH components, owners
  OPTIONAL MATCH (m:Maintenance) WHERE m.ends_at > timestamp() AND m.starts_at <= timestamp()
    AND (any(c IN m.components WHERE c IN components)
      OR any(t IN m.teams WHERE t IN [o IN owners | o.team]))
  RETURN max(m.ends_at) AS quiet_until
}
WITH i, f, alerts, owners, fallback, cited, recent, change_source, actions, steps, previous,
     quiet_until,
     [o IN owners + fallback WHERE o.person IS NOT NULL | o.person]
       + [o IN owners + fallback WHERE o.slack_user_id IS NOT NULL | o.slack_user_id] AS people
CALL {
  WITH people
  UNWIND people AS each
  WITH DISTINCT each AS who
  OPTIONAL MATCH (fa:Fact {person: who})
  WHERE fa.kind = 'preference' AND fa.status = 'approved' AND NOT (fa)<-[:SUPERSEDES]-(:Fact)
  RETURN collect(CASE WHEN fa IS NULL THEN null ELSE {
       id: fa.id, person: fa.person, failure_kind: fa.failure_kind, no_page: fa.no_page,
       ticket: fa.ticket, detail: fa.detail, text: fa.text, stated_at: fa.stated_at,
       approved_at: fa.approved_at} END) AS preferences
}
OPTIONAL MATCH (pt:Task {id: 'page:' + i.id})
CALL {
  WITH i, pt
  WITH i WHERE pt IS NOT NULL  // a calm incident's respond needs none of this
  MATCH (t:Task)-[:FOR]->(i) WHERE t.kind IN ['respond', 'page', 'notify_update']
  MATCH (s:Step)-[:OF]->(t) WHERE s.tool IN ['response_context', 'route_new_cause']
  // a new cause's route only when it was paged (as incident_paged.cypher): not a lead's owner
  OPTIONAL MATCH (x:Action {intent_id: 'incident:' + i.id + ':repage:' + t.id})
  WITH s, x WHERE s.tool = 'response_context' OR x IS NOT NULL
  WITH s ORDER BY s.at DESC LIMIT 1
  RETURN collect({result: s.result, at: s.at}) AS paged
}
CALL {
  WITH i, pt
  WITH i WHERE pt IS NOT NULL
  MATCH (i)-[:HAS_VERDICT]->(v:Verdict)
  RETURN collect({id: v.id, verdict: v.verdict, actual_cause: v.actual_cause, by: v.by,
       by_name: v.by_name, at: v.at, text: v.text, source: v.source,
       event_id: v.event_id, seq: coalesce(v.seq, 0)}) AS verdicts
}
CALL {
  WITH i, pt
  WITH i WHERE pt IS NOT NULL
  MATCH (i)-[:HAS_DELIVERY]->(d:Delivery)
  WHERE d.intent_id = 'incident:' + i.id + ':initial-notification' AND d.outcome = 'refused'
  RETURN collect({channel: d.channel, reason: d.reason, at: d.at, n: d.n}) AS refused
}
// @include _held_windows
RETURN i.id AS id, i.status AS status, i.title AS title, i.severity AS severity,
       i.opened_at AS opened_at, i.resolved_at AS resolved_at, i.received_at AS received_at,
       i.root_cause AS root_cause, i.conclusive AS conclusive,
       i.notified_root_cause AS notified_root_cause, i.merged_into AS merged_into,
       i.acknowledged_at AS acknowledged_at, i.acknowledged_by AS acknowledged_by,
       i.resolved_by AS resolved_by,
       coalesce(i.hold_until, 0) - timestamp() AS hold_ms,
       quiet_until, i.maintenance_until AS maintenance_until,
       f.summary AS summary, f.confidence AS confidence, f.candidates AS candidates,
       f.paths_json AS paths_json, f.ruled_out_json AS ruled_out_json, f.measured_json AS measured_json, f.planner AS planner,
       f.model AS model, f.second_opinion_json AS second_opinion_json,
       f.separated_by AS separated_by, f.evidence_json AS evidence_json,
       i.similar_json AS similar_json, i.heartbeat AS heartbeat, i.last_seen AS last_seen, alerts,
       owners, fallback, cited, recent, change_source, actions, steps, previous, preferences,
       pt.status AS early_page, paged, verdicts, refused, held
