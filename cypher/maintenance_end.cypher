// End a maintenance window now (database clock) as $by. A window already over (it ran its
// course, or someone ended it) changes nothing: its end and `ended_by` are its record, and
// the pages it held went out at that end. `over`: it was already over (no write), with its
// `ended_by` (null when it ran its course).
// Ending one not over yet releases the paused `respond`, `page`, `escalate`, `notify_reopened`
// and `notify_update` tasks that wait for it: paused until its old end (a first page of an
// incident held until then: paused at most until then, as it looks again every
// HELD_PAGE_RECHECK_MS in agents/respond/maintenance.py) (maintenance.hold and
// a snoozed escalation pause until the latest end of the windows covering the incident, so a
// task paused until another time waits for another window, or for an escalation level that is
// not due yet, and stays paused). Each released task checks again whether any window still
// covers its incident, and pages (escalates, tells the thread of a reopen or a new cause) if
// none does. An incident quiet until this window's old end is quiet until now.
// `released`: the open incidents with a task released (a resolved one's task ends without a
// page, a merged one's with none: its survivor speaks for it); `tasks`: those tasks (workers
// to wake).
// No row: no such window.
MATCH (m:Maintenance {id: $id})
WITH m, m.ends_at AS old_end, m.ends_at <= timestamp() AS over
SET m.ends_at = CASE WHEN over THEN old_end ELSE timestamp() END,
    m.ended_by = CASE WHEN over THEN m.ended_by ELSE $by END
WITH m, old_end, over
OPTIONAL MATCH (i:Incident)-[:IN_MAINTENANCE]->(m) WHERE NOT over
WITH m, over, old_end, i, i.maintenance_until = old_end AS held_here
// a task released below that finds another window covering it sets a later end again
// (maintenance_covering)
FOREACH (_ IN CASE WHEN held_here THEN [1] ELSE [] END | SET i.maintenance_until = m.ends_at)
WITH m, over, old_end, i, held_here
OPTIONAL MATCH (t:Task)-[:FOR]->(i)
  WHERE t.kind IN ['respond', 'page', 'escalate', 'notify_reopened', 'notify_update']
    AND t.status = 'paused'
    // a held first page looks again before the end (HELD_PAGE_RECHECK_MS): it waits for this
    // window when the incident is held until its end
    AND (t.resume_at = old_end OR (t.kind IN ['respond', 'page'] AND held_here
                                   AND t.resume_at <= old_end))
// a paused task is claimable once its lease_until has passed: one ms ago is at once, even for
// a claim in this same millisecond
FOREACH (_ IN CASE WHEN t IS NULL THEN [] ELSE [1] END | SET t.lease_until = timestamp() - 1)
WITH m, over, count(DISTINCT t) AS tasks,
     count(DISTINCT CASE WHEN t IS NULL OR i.status <> 'open' THEN NULL ELSE i.id END) AS released
RETURN m.id AS id, m.ends_at AS ends_at, m.ended_by AS ended_by, over, released, tasks
