// The tenant's latest events for the page's activity feed, from incidents opened since $since
// (ms UTC; the opened_at index keeps this cheap as history grows): opened, cause found (a
// heartbeat's silence: that it stopped arriving), messages and tickets, acknowledged,
// verdicts, resolved. At most $limit of each kind.
MATCH (i:Incident) WHERE i.opened_at > $since AND i.status <> 'merged'
WITH i ORDER BY i.opened_at DESC LIMIT $limit
RETURN i.opened_at AS at, 'incident' AS event, i.id AS incident_id,
       'opened: ' + coalesce(i.title, i.id) AS text
UNION ALL
MATCH (i:Incident)-[:HAS_FINDING]->(f:Finding) WHERE i.opened_at > $since
WITH i, f ORDER BY f.updated_at DESC LIMIT $limit
RETURN f.updated_at AS at, 'finding' AS event, i.id AS incident_id,
       CASE WHEN i.heartbeat IS NOT NULL THEN 'the ' + i.heartbeat + ' heartbeat stopped arriving'
            WHEN f.root_cause IS NULL THEN 'inconclusive'
            WHEN coalesce(f.confidence, 0) < $low_confidence
            THEN 'named, low confidence: ' + f.root_cause
            ELSE 'cause found: ' + f.root_cause END
       AS text
UNION ALL
MATCH (i:Incident)<-[:FOR]-(x:Action) WHERE i.opened_at > $since
WITH i, x ORDER BY coalesce(x.updated_at, x.reserved_at) DESC LIMIT $limit
RETURN coalesce(x.updated_at, x.reserved_at) AS at, 'action' AS event, i.id AS incident_id,
       x.kind + ' ' + x.status + CASE WHEN x.adapter IS NULL THEN '' ELSE ' via ' + x.adapter END
       AS text
UNION ALL
MATCH (i:Incident) WHERE i.opened_at > $since AND i.acknowledged_at IS NOT NULL
WITH i ORDER BY i.acknowledged_at DESC LIMIT $limit
RETURN i.acknowledged_at AS at, 'ack' AS event, i.id AS incident_id,
       'acknowledged by ' + coalesce(i.acknowledged_by, 'someone') AS text
UNION ALL
MATCH (i:Incident)-[:HAS_VERDICT]->(v:Verdict) WHERE i.opened_at > $since
WITH i, v ORDER BY v.at DESC, coalesce(v.seq, 0) DESC LIMIT $limit
RETURN v.at AS at, 'verdict' AS event, i.id AS incident_id,
       v.verdict + ' by ' + coalesce(v.by_name, v.by) AS text
UNION ALL
MATCH (i:Incident) WHERE i.opened_at > $since AND i.resolved_at IS NOT NULL
WITH i ORDER BY i.resolved_at DESC LIMIT $limit
RETURN i.resolved_at AS at, 'incident' AS event, i.id AS incident_id,
       'resolved' + CASE WHEN i.resolved_by IS NULL THEN '' ELSE ' by ' + i.resolved_by END AS text
