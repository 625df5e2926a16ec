// Record delivery attempts of an incident's notices ($deliveries: maps {intent_id, channel,
// outcome: delivered|refused|error, reason, fallback_from}), each a Delivery node on the
// incident, stamped with the database clock. Not fenced: the attempts happened whether or not
// the lease still holds, and the incident must show them.
MATCH (i:Incident {id: $incident_id})
UNWIND $deliveries AS d
CREATE (i)-[:HAS_DELIVERY]->(:Delivery {intent_id: d.intent_id, at: timestamp(),
  channel: d.channel, outcome: d.outcome, reason: d.reason, fallback_from: d.fallback_from})
RETURN count(*) AS recorded
