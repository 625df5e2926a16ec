// Record the outcomes of outside calls: sent (with its reference), unknown or failed. $records:
// maps {intent_id, status, external_ref, detail}. Not fenced: the calls already happened, and
// the graph must say so. reserve_action.cypher and complete_task.cypher record them the same
// way in passing (TaskRun keeps them until its next write, issue #16).
UNWIND $records AS r
MATCH (a:Action {intent_id: r.intent_id})
SET a.status = r.status, a.external_ref = r.external_ref, a.updated_at = timestamp(),
    a.detail = r.detail
RETURN a.status AS status
