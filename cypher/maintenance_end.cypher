// End a maintenance window now (database clock; one already over keeps its end). The paused
// `respond`, `page` and `escalate` tasks of the incidents it held become claimable at once: each checks
// again whether any window still covers its incident, and pages (or escalates) if none does.
// Each incident it held is quiet no longer than the window's new end.
// `released`: the open incidents with a task released (a resolved one's task ends without a
// page); `tasks`: those tasks (workers to wake).
// No row: no such window.
MATCH (m:Maintenance {id: $id})
SET m.ends_at = CASE WHEN m.ends_at > timestamp() THEN timestamp() ELSE m.ends_at END,
    m.ended_by = $by
WITH m
OPTIONAL MATCH (i:Incident)-[:IN_MAINTENANCE]->(m)
// an incident quiet until this window's old end is quiet until now; a task released below
// that finds another window covering it sets the later end again (maintenance_covering)
FOREACH (_ IN CASE WHEN i.maintenance_until > m.ends_at THEN [1] ELSE [] END |
  SET i.maintenance_until = m.ends_at)
WITH m, i
OPTIONAL MATCH (t:Task)-[:FOR]->(i) WHERE t.kind IN ['respond', 'page', 'escalate'] AND t.status = 'paused'
FOREACH (_ IN CASE WHEN t IS NULL THEN [] ELSE [1] END | SET t.lease_until = timestamp())
WITH m, count(DISTINCT t) AS tasks,
     count(DISTINCT CASE WHEN t IS NULL OR i.status = 'resolved' THEN NULL ELSE i.id END) AS released
RETURN m.id AS id, m.ends_at AS ends_at, released, tasks
