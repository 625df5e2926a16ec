// Record the outcomes of outside calls: sent (with its reference), unknown or failed, and the
// delivery attempts of notices ($records, $deliveries: see `_records_call`). Not fenced: the
// calls already happened, and the graph must say so. reserve_action.cypher and
// complete_task.cypher record them the same way in passing (TaskRun keeps them until its next
// write).
// @include _records_call
RETURN size($records) + size($deliveries) AS recorded
