// Resolve an open incident by hand (a Resolved button, a `resolved` verdict, the API): status
// `resolved`, `resolved_at` (database clock, ms) and `resolved_by` (a person's name). `fresh`
// is true only for the resolution that took effect; a repeat changes nothing. It creates the
// responder's `notify_state` task that sends the one resolve notice, closes the ticket and
// edits the page.
MATCH (i:Incident {id: $incident_id})
WITH i, i.status = 'open' AS fresh
SET i.status = CASE WHEN fresh THEN 'resolved' ELSE i.status END,
    i.resolved_at = CASE WHEN fresh THEN timestamp() ELSE i.resolved_at END,
    i.resolved_by = CASE WHEN fresh THEN $by ELSE i.resolved_by END
WITH i, fresh
FOREACH (_ IN CASE WHEN fresh THEN [1] ELSE [] END |
// @include _resolve_notice
)
RETURN i.id AS id, i.status AS status, i.resolved_at AS resolved_at,
       i.resolved_by AS resolved_by, i.merged_into AS merged_into, fresh
