// Record the outcome of an external call: sent (with its reference), unknown or failed.
// Not fenced: the call already happened, and the graph must say so.
MATCH (a:Action {intent_id: $intent_id})
SET a.status = $status, a.external_ref = $external_ref, a.updated_at = timestamp(),
    a.detail = $detail
RETURN a.status AS status
