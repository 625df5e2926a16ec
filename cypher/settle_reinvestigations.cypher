// After one delivery's triage: one investigation per delivery, at most one re-investigation per
// incident per $reinvestigate_ms. For each incident of $incident_ids with `reinvestigate` tasks
// not yet claimed: while its `investigate` task is still open (it will read every alert), they
// are deleted; otherwise the oldest stays and waits (`not_before`, ms, database clock) until
// $reinvestigate_ms after the last one scheduled (`reinvestigate_at` on the incident), and the
// others are deleted: the one left reads every alert that came meanwhile.
// The tasks are found from each incident (a few), not from the open tasks (all of them: with
// no worker running, 20 ms per storm after three storms).
// $joined: [{incident_id, alert_key, task_id}] open incidents new firing alerts of the delivery
// joined (alert_key: the last of them written): each gets a `reinvestigate` task $task_id
// unless one is pending already (open, unclaimed: it will read every alert), its first
// investigation has not started, or a `reinvestigate` task was created at or after that alert
// was received (database clock), claimed or even done since: it runs after the alert was in
// the graph, so it reads it (triage's task for a component new to the incident, which a
// worker may claim before this query runs); the rest below schedules it as any other.
CALL {
  UNWIND $joined AS j
  MATCH (i:Incident {id: j.incident_id})
  WHERE i.status = 'open'
  OPTIONAL MATCH (a:Alert {key: j.alert_key})
  WITH j, i, a.received_at AS written
  OPTIONAL MATCH (t:Task)-[:FOR]->(i)
  WHERE t.kind IN ['investigate', 'reinvestigate']
    AND ((t.status = 'open' AND t.epoch = 0)
      OR (t.kind = 'reinvestigate' AND t.created_at >= written))
  WITH j, i, count(t) AS waiting
  WHERE waiting = 0
  CREATE (r:Task {id: j.task_id, kind: 'reinvestigate', incident_id: i.id,
// @include _fresh_task
})-[:FOR]->(i)
  RETURN count(r) AS created
}
WITH created
UNWIND $incident_ids AS incident_id
MATCH (i:Incident {id: incident_id})
WITH i  // else the planner scans every open Task (the Task.status index) per incident
MATCH (r:Task)-[:FOR]->(i)
WHERE r.status = 'open' AND r.kind = 'reinvestigate' AND r.epoch = 0
WITH i, r ORDER BY r.created_at, r.id
WITH i, collect(r) AS pending
OPTIONAL MATCH (first:Task)-[:FOR]->(i)
WHERE first.kind = 'investigate' AND first.status = 'open' AND first.epoch = 0
WITH i, pending, count(first) > 0 AS unread
WITH i, pending, unread, head(pending) AS keep,
     NOT unread AND coalesce(head(pending).not_before, 0) = 0 AS schedule,
     CASE WHEN coalesce(i.reinvestigate_at, 0) + $reinvestigate_ms > timestamp()
          THEN coalesce(i.reinvestigate_at, 0) + $reinvestigate_ms ELSE timestamp() END AS at
FOREACH (_ IN CASE WHEN schedule THEN [1] ELSE [] END |
  SET keep.not_before = at, i.reinvestigate_at = at)
WITH i, pending, unread
FOREACH (t IN CASE WHEN unread THEN pending ELSE tail(pending) END | DETACH DELETE t)
RETURN i.id AS incident_id, unread
