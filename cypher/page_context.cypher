// What the page sent before a late diagnosis (task `page`: agents/respond/responder.py,
// `_page_early`) needs, in one round trip, for each incident of $incident_ids (a worker's
// batch; one row each, none for an incident that is gone): the incident's columns of
// `respond_context` that the page, the page hold and the quiet-window check read, `planner`
// (not null once the finding is written), `alerts`, `owners` (`response_context` rows of the
// alerting components only: there is no cause yet), `fallback`, `quiet_until`,
// `maintenance_until`, `preferences` and `held`, as `respond_context.cypher` reads them. Not the
// changes, steps, actions and previous incident that the ticket and the edit with the cause
// need: `respond_context` reads those, later. About half its server time: the page is claimed
// ahead of everything in a burst, and its reads compete with the webhook's writes.
// Read only; every lookup starts from an index (`tests/test_query_plans.py`).
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
CALL {
  WITH alerting
  UNWIND alerting AS name
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
  WITH alerting, owners
  OPTIONAL MATCH (m:Maintenance) WHERE m.ends_at > timestamp() AND m.starts_at <= timestamp()
    AND (any(c IN m.components WHERE c IN alerting)
      OR any(t IN m.teams WHERE t IN [o IN owners | o.team]))
  RETURN max(m.ends_at) AS quiet_until
}
WITH i, f, alerts, owners, fallback, quiet_until,
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
// @include _held_windows
RETURN i.id AS id, i.status AS status, i.title AS title, i.severity AS severity,
       i.opened_at AS opened_at, i.resolved_at AS resolved_at, i.received_at AS received_at,
       i.root_cause AS root_cause, i.merged_into AS merged_into,
       i.acknowledged_at AS acknowledged_at, i.acknowledged_by AS acknowledged_by,
       i.resolved_by AS resolved_by,
       coalesce(i.hold_until, 0) - timestamp() AS hold_ms,
       quiet_until, i.maintenance_until AS maintenance_until, f.planner AS planner,
       alerts, owners, fallback, preferences, held
