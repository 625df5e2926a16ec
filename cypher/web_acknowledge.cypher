// Acknowledge an open incident from the web page as $by (the signed-in person): the first
// acknowledgement stands (a second click or another person changes nothing). No row when the
// incident is not open.
MATCH (i:Incident {id: $incident_id})
WHERE i.status = 'open'
SET i.acknowledged_at = coalesce(i.acknowledged_at, timestamp()),
    i.acknowledged_by = coalesce(i.acknowledged_by, $by)
RETURN i.acknowledged_at AS acknowledged_at, i.acknowledged_by AS acknowledged_by
