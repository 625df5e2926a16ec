// tests/test_web.py, where no escalation or remediation worker runs: the records those leave
// on an unacknowledged incident, in the shared shapes the web page reads (so the test shows
// how they read): the page's first delivery
// refused and fallen back to the default channel, escalation level 1 five minutes after the
// page, and a restart remediation proposed (its proposal sent through slack), approved by $by,
// run once and verified (the thread refused that notice: a copy went to the outbox).
MATCH (i:Incident {id: $incident_id})
OPTIONAL MATCH (page:Action {intent_id: 'incident:' + i.id + ':initial-notification'})
WITH i, coalesce(page.reserved_at, i.opened_at) AS paged
SET i.escalation_level = 1
MERGE (x:Action {intent_id: 'incident:' + i.id + ':escalate:1'})
  ON CREATE SET x.kind = 'escalate', x.status = 'sent', x.adapter = 'outbox',
    x.reserved_at = paged + 300000, x.updated_at = paged + 300000,
    x.external_ref = 'outbox:escalate-1', x.notified = 'Hal Example (on call for platform)'
MERGE (x)-[:FOR]->(i)
CREATE (i)-[:HAS_DELIVERY]->(:Delivery {intent_id: 'incident:' + i.id + ':initial-notification',
         at: paged + 1000, channel: '#checkout-oncall', outcome: 'refused',
         reason: 'channel_not_found', fallback_from: null}),
       (i)-[:HAS_DELIVERY]->(:Delivery {intent_id: 'incident:' + i.id + ':initial-notification',
         at: paged + 2000, channel: '#platform-oncall', outcome: 'delivered', reason: null,
         fallback_from: '#checkout-oncall'}),
       (i)-[:HAS_DELIVERY]->(:Delivery {intent_id: 'incident:' + i.id + ':escalate:1',
         at: paged + 301000, channel: '#platform-oncall', outcome: 'delivered', reason: null,
         fallback_from: null})
CREATE (i)-[:HAS_REMEDIATION]->(r:Remediation {id: 'rem:' + i.id, playbook_id: 'pb:restart',
         type: 'restart', status: 'succeeded', proposed_at: paged + 360000}),
       (r)-[:APPROVED_BY]->(:Approval {by: $by, at: paged + 420000, source: 'slack'}),
       (r)-[:HAS_ATTEMPT]->(:Attempt {n: 1, at: paged + 430000, outcome: 'succeeded',
         external_ref: 'outbox:restart-1'}),
       (r)-[:VERIFIED]->(:Verification {outcome: 'verified', at: paged + 550000,
         detail: 'alerts resolved'})
MERGE (p:Action {intent_id: 'incident:' + i.id + ':remediation:pb:restart:proposed'})
  ON CREATE SET p.kind = 'followup', p.status = 'sent', p.adapter = 'slack',
    p.reserved_at = paged + 361000, p.updated_at = paged + 361000, p.external_ref = 'C0:1.2'
MERGE (p)-[:FOR]->(i)
MERGE (v:Action {intent_id: 'incident:' + i.id +
                 ':remediation:pb:restart:verification:verified:fallback'})
  ON CREATE SET v.kind = 'followup', v.status = 'sent', v.adapter = 'outbox',
    v.reserved_at = paged + 551000, v.updated_at = paged + 551000,
    v.external_ref = 'outbox:verified-1'
MERGE (v)-[:FOR]->(i)
RETURN i.id AS id
