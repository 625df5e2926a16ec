// Maintenance windows, newest first: the ones not over yet (database clock), or every one with
// $all; each with `active`, the incidents it held (`held`: ids, newest first, at most 50) and
// who ended it by hand (`ended_by`, null when it ran its course).
MATCH (m:Maintenance)
WHERE $all OR m.ends_at > timestamp()
OPTIONAL MATCH (i:Incident)-[:IN_MAINTENANCE]->(m)
WITH m, i ORDER BY i.opened_at DESC
WITH m, collect(i.id)[..50] AS held
RETURN m.id AS id, m.components AS components, m.teams AS teams, m.starts_at AS starts_at,
       m.ends_at AS ends_at, m.reason AS reason, m.by AS by, m.ended_by AS ended_by,
       m.starts_at <= timestamp() AND timestamp() < m.ends_at AS active, held
ORDER BY starts_at DESC, id
LIMIT $limit
