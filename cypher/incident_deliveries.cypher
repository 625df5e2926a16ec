// Every delivery attempt of an incident's notices, oldest first: intent id, time (ms UTC),
// channel, outcome (delivered | refused | error), the refusal's reason, and the channel that
// refused before this one (fallback_from). A page's attempts are written together and share a
// millisecond: its refusals come before the delivery that fell back, in the order they were
// made (`n`, their place in the write; a record older than `n` goes by outcome alone).
MATCH (i:Incident {id: $incident_id})-[:HAS_DELIVERY]->(d:Delivery)
RETURN d.intent_id AS intent_id, d.at AS at, d.channel AS channel, d.outcome AS outcome,
       d.reason AS reason, d.fallback_from AS fallback_from
ORDER BY d.at, d.intent_id, CASE WHEN d.outcome = 'delivered' THEN 1 ELSE 0 END, coalesce(d.n, 0)
