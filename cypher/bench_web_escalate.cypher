// bench/web_screenshots.py only, where no escalation worker runs: the records an escalation
// policy leaves on an unacknowledged incident (level 1 five minutes after the page, whose
// first delivery was refused and fell back to the default channel), in the shared shapes the
// web page reads, so the picture shows how they read.
MATCH (i:Incident {id: $incident_id})
OPTIONAL MATCH (page:Action {intent_id: 'incident:' + i.id + ':initial-notification'})
WITH i, coalesce(page.reserved_at, i.opened_at) AS paged
SET i.escalation_level = 1
MERGE (x:Action {intent_id: 'incident:' + i.id + ':escalate:1'})
  ON CREATE SET x.kind = 'escalate', x.status = 'sent', x.adapter = 'outbox',
    x.reserved_at = paged + 300000, x.updated_at = paged + 300000,
    x.external_ref = 'outbox:escalate-1'
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
RETURN i.id AS id
