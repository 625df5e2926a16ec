// What the live page watches, per tenant: counters that move when the agents leave an event in
// the graph (a new or resolved alert, a new or resolved incident, a step checkpoint, a finding,
// an action reserved or sent, a verdict, a trust change) and the tasks held now (a claim).
// Polled about once a second (gateway/web/live.py), so it must stay cheap as history grows:
// node counts come from db.meta.stats() (constant time; a count in a longer query scans the
// label: 10 ms for 200k steps), firing alerts, open incidents and held tasks from the status
// indexes (they count what is active, not history), and only the Finding, Action and Playbook
// sets (one per incident at most, or a few) are scanned.
// Deliveries and remediation records (approvals, attempts, verifications) are counted from
// the stats too; acknowledgements as the latest acknowledged_at of the open incidents.
CALL db.meta.stats() YIELD labels
WITH coalesce(labels['Alert'], 0) AS alerts, coalesce(labels['Incident'], 0) AS incidents,
     coalesce(labels['Step'], 0) AS steps, coalesce(labels['Verdict'], 0) AS verdicts,
     coalesce(labels['Delivery'], 0) AS deliveries,
     coalesce(labels['Remediation'], 0) + coalesce(labels['Approval'], 0)
       + coalesce(labels['Attempt'], 0) + coalesce(labels['Verification'], 0) AS remediation
OPTIONAL MATCH (a:Alert) WHERE a.status = 'firing'
WITH alerts, incidents, steps, verdicts, deliveries, remediation, count(a) AS firing_alerts
OPTIONAL MATCH (i:Incident) WHERE i.status = 'open'
WITH alerts, incidents, steps, verdicts, deliveries, remediation, firing_alerts,
     count(i) AS open_incidents, max(i.acknowledged_at) AS ack_at
OPTIONAL MATCH (f:Finding)
WITH alerts, incidents, steps, verdicts, deliveries, remediation, firing_alerts, open_incidents,
     ack_at, count(f) AS findings, max(f.updated_at) AS finding_at
OPTIONAL MATCH (x:Action)
WITH alerts, incidents, steps, verdicts, deliveries, remediation, firing_alerts, open_incidents,
     ack_at, findings, finding_at, count(x) AS actions,
     max(coalesce(x.updated_at, x.reserved_at)) AS action_at
OPTIONAL MATCH (pb:Playbook)
WITH alerts, incidents, steps, verdicts, deliveries, remediation, firing_alerts, open_incidents,
     ack_at, findings, finding_at, actions, action_at, count(pb) AS playbooks,
     sum(pb.helped + pb.misled) AS trust_moves
OPTIONAL MATCH (t:Task) WHERE t.status = 'claimed'
RETURN alerts, firing_alerts, incidents, open_incidents, steps, findings, finding_at, actions,
       action_at, verdicts, playbooks, trust_moves, deliveries, remediation, ack_at,
       collect(t.id + ' ' + toString(t.epoch) + ' ' + t.kind + ' ' + t.owner) AS claims
