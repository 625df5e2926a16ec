// End a maintenance window now (database clock; one already over keeps its end). The paused
// `respond`, `page`, `escalate`, `notify_reopened` and `notify_update` tasks of the incidents it
// held become claimable at once: each checks again whether any window still covers its
// incident, and pages (escalates, tells the thread of a reopen or a new cause) if none does.
// Each incident it held is quiet no longer than the window's new end.
// `released`: the open incidents with a task released (a resolved one's task ends without a
// page, a merged one's with none: its survivor speaks for it); `tasks`: those tasks (workers
// to wake).
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
OPTIONAL MATCH (t:Task)-[:FOR]->(i)
  WHERE t.kind IN ['respond', 'page', 'escalate', 'notify_reopened', 'notify_update']
    AND t.status = 'paused'
// a paused task is claimable once its lease_until has passed: one ms ago is at once, even for
// a claim in this same millisecond
FOREACH (_ IN CASE WHEN t IS NULL THEN [] ELSE [1] END | SET t.lease_until = timestamp() - 1)
WITH m, count(DISTINCT t) AS tasks,
     count(DISTINCT CASE WHEN t IS NULL OR i.status <> 'open' THEN NULL ELSE i.id END) AS released
RETURN m.id AS id, m.ends_at AS ends_at, released, tasks
