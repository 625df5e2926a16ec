// The verdicts engineers gave on an incident (Slack buttons and thread replies), oldest first (`seq`
// orders two given in the same millisecond as they were recorded).
MATCH (:Incident {id: $incident_id})-[:HAS_VERDICT]->(v:Verdict)
RETURN v.id AS id, v.verdict AS verdict, v.actual_cause AS actual_cause, v.by AS by,
       v.by_name AS by_name, v.at AS at, v.text AS text, v.source AS source,
       v.event_id AS event_id, coalesce(v.seq, 0) AS seq
ORDER BY at, seq, id
