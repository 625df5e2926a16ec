// Register every label, relationship type and property name the queries in this folder use,
// in one serial write, before any other traffic (TenantGraph.ensure_schema runs it at startup).
// Why: FalkorDB 4.16 logs most writes to the AOF as GRAPH.EFFECT, which refers to a property by
// a bare attribute id. When concurrent first writes to a fresh graph introduced new names, the
// AOF declared them in another order than the live server had numbered them, and after a
// kill -9 the replayed graph had properties under other names (README, "Crash safety";
// tests/test_crash.py reproduces it). With every name registered first, no write adds one.
// tests/test_cypher.py fails when a query uses a name missing here: add it.
CREATE (s:Action:Alert:Approval:Attempt:Change:Component:Decision:Delivery:Fact:Finding:Incident:Maintenance:OnCallShift:Person:Playbook:Remediation:Step:Task:Team:Verdict:Verification:WebSession {
  actual_cause: 0, adapter: 0, alert_key: 0, alertname: 0, alerts_seen: 0, aliases: 0,
  annotations_json: 0, applicable: 0, approved_at: 0, args: 0, at: 0, attempt_id: 0, attempts:
  0, author: 0, by: 0, by_name: 0, by_world_file: 0, candidate: 0, candidates: 0, checks_json: 0, client: 0,
  component: 0, components: 0, conclusive: 0, confidence: 0, created_at: 0, criticality: 0,
  detail: 0, discarded_at: 0, email: 0, ends_at: 0, ends_at_ms: 0, epoch: 0, escalation: 0,
  event_id: 0, external_ref: 0, fact_id: 0, failure_kind: 0, fingerprint: 0, finished_at: 0,
  firing: 0, from: 0, generator_url: 0, group_key: 0, group_keys: 0, helped: 0, hold_until: 0, id: 0,
  incident_id: 0, intent_id: 0, is_default: 0, key: 0, kind: 0, labels_json: 0, last_error: 0, learned_from: 0,
  lease_until: 0, link: 0, misled: 0, n: 0, name: 0, no_page: 0, notified: 0,
  notified_root_cause: 0, opened_at: 0, outcome: 0, owner: 0, owns: 0, path: 0, paths_json: 0,
  person: 0, person_name: 0, planner: 0, playbook: 0, propagation: 0, protocol: 0, purpose: 0,
  reach: 0, received_at: 0, receiver: 0, ref: 0, reserved_at: 0, resolved_at: 0, result: 0,
  root_cause: 0, ruled_out_json: 0, severity: 0, severity_rank: 0, slack_channel: 0,
  slack_user_id: 0, source: 0, started_at: 0, starts_at: 0, starts_at_ms: 0, stated_at: 0,
  status: 0, steered: 0, summary: 0, taken_over: 0, task_id: 0, team: 0, tech: 0, text: 0,
  ticket: 0, title: 0, to: 0, tool: 0, trust: 0, trust_at_use: 0, type: 0, updated_at: 0,
  model: 0, pauses: 0, resume_at: 0, second_opinion_json: 0,
  values_json: 0, verdict: 0, verdict_id: 0, weight: 0,
  declared: 0, basis: 0, not_before: 0, reinvestigate_at: 0, last_seen: 0, oncall_json: 0, origin: 0, paths: 0, rate: 0,
  retired_at: 0, sources: 0,
  via: 0, split_from: 0, merged_into: 0,
  confirmed_by: 0, learned_at: 0, text_vec: 0, resolved_by: 0, similar_json: 0,
  evidence_json: 0, measured_json: 0, separated_by: 0, retired_reason: 0, retired_by: 0,
  props: 0, rank: 0, trimmed_at: 0,
  channel: 0, covers: 0, depths: 0, hops: 0, pinned_to: 0, producer: 0, shift_ends_at: 0,
  ticket_ref: 0, topic: 0, touched: 0, way: 0, direction: 0, edge: 0, of: 0,
  acknowledged_at: 0, acknowledged_by: 0, resolved_by: 0, escalation_level: 0,
  maintenance_until: 0, fallback_from: 0, reason: 0, playbook_id: 0, proposed_at: 0,
  expires_at: 0, approved_by: 0, verified: 0})
CREATE (s)-[:APPROVED_BY]->(s),
       (s)-[:CALLS]->(s),
       (s)-[:CONSUMES]->(s),
       (s)-[:FOR]->(s),
       (s)-[:FOR_TEAM]->(s),
       (s)-[:HAS_ALERT]->(s),
       (s)-[:HAS_ATTEMPT]->(s),
       (s)-[:HAS_DECISION]->(s),
       (s)-[:HAS_DELIVERY]->(s),
       (s)-[:HAS_FINDING]->(s),
       (s)-[:HAS_REMEDIATION]->(s),
       (s)-[:HAS_VERDICT]->(s),
       (s)-[:HOSTED_ON]->(s),
       (s)-[:IMPACTED]->(s),
       (s)-[:LEARNED_FROM]->(s),
       (s)-[:MEMBER_OF]->(s),
       (s)-[:MODIFIES]->(s),
       (s)-[:NEXT]->(s),
       (s)-[:OF]->(s),
       (s)-[:ON]->(s),
       (s)-[:ON_CALL]->(s),
       (s)-[:OWNS]->(s),
       (s)-[:PINNED_TO]->(s),
       (s)-[:PUBLISHES]->(s),
       (s)-[:READS_WRITES]->(s),
       (s)-[:ROOT_CAUSE]->(s),
       (s)-[:SPLIT_FROM]->(s),
       (s)-[:STATED_IN]->(s),
       (s)-[:SUPERSEDES]->(s),
       (s)-[:SUPPORTED_BY]->(s),
       (s)-[:TOUCHED]->(s),
       (s)-[:USED]->(s),
       (s)-[:VERIFIED]->(s)
WITH s
DETACH DELETE s
RETURN 1 AS registered
