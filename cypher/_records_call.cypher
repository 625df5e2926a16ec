// A fragment, not a query: `cypher.load` puts it where a query says `// @include _records_call`,
// first in the query (record_actions, reserve_action, complete_task). It records the outcomes of
// this attempt's earlier outside calls ($records, maps {intent_id, status, external_ref,
// detail}) and its delivery attempts ($deliveries, maps {incident_id, intent_id, channel,
// outcome: delivered|refused|error, reason, fallback_from}, each a Delivery node on its
// incident, stamped with the database clock, with `n` its place in $deliveries: the attempts of
// one page are written together, so they share a millisecond and `n` keeps their order, the
// refusals before the delivery that fell back), whether or not the lease still holds: the calls
// happened, and the graph must say so. One lookup per record on the unique intent_id index:
// `intent_id IN [r IN $records | …]` scanned every Action.
CALL {
  UNWIND $records AS r
  MATCH (d:Action {intent_id: r.intent_id})
  SET d.status = r.status, d.external_ref = r.external_ref, d.detail = r.detail,
      d.updated_at = timestamp()
}
CALL {
  UNWIND range(0, size($deliveries) - 1) AS n
  WITH $deliveries[n] AS d, n
  MATCH (i:Incident {id: d.incident_id})
  CREATE (i)-[:HAS_DELIVERY]->(:Delivery {intent_id: d.intent_id, at: timestamp(), n: n,
    channel: d.channel, outcome: d.outcome, reason: d.reason, fallback_from: d.fallback_from})
}
