// Claim the most urgent claimable task of the given kinds: open, or claimed with an expired lease
// and attempts left (the reaper fails the others). Attempts are counted here, at claim time.
// A batch: with it, up to size($attempt_ids) more of the same kind, next in the same order (one
// agent and one read of their contexts for all: agents/tasks/worker.py), but at most half of
// those claimable (rounded up), so an idle worker woken with this one finds the other half.
// One row per task claimed, most urgent first; each gets its attempt id from $attempt_ids.
// $limit: twice size($attempt_ids), the candidates each selection keeps (LIMIT takes no expression).
// Most urgent: the lowest $priority[kind] (agents/tasks/kinds.py; a kind missing there last),
// then the oldest, so a burst of new incidents is paged before a backlog of other work; tasks
// created in the same millisecond in the order their nodes were created (`id(t)`), so which
// ones a batch takes does not vary from run to run.
// A follow-up ($after_page: agents/tasks/kinds.py) waits until the incident's first notification is out,
// unless the incident was merged into another (the responder then just finishes it).
// Two selections, the best of each: kinds that wait for no page, without looking at their
// incident, and follow-ups, whose incident is checked. One selection that looked up every
// candidate's incident cost 5-12 ms per claim with 3,000 open tasks (a burst with a backlog),
// against 1.5-3 ms this way.
// `t.status IN [...]` comes first so the Task.status index is used: `status = 'open' OR ...`
// scanned the kind index instead, 11.5 ms per claim with 100k finished tasks (bench/claim.py).
// Select first, then SET (LIMIT does not limit an eager write). Lease uses the database clock.
// A paused task (pause_task: every model cooling down) keeps its resume time in lease_until;
// a re-investigation waits until `not_before` (settle_reinvestigations: one per incident per
// BLAST_REINVESTIGATE_S).
// A page past its deadline ($page_due kinds, agents/tasks/kinds.py: an investigation): a task
// of those kinds that is still live (open, claimed or paused: not done) $page_within_ms after it
// was created, with no page task yet (`page_task` unset), is a candidate of kind 'page' (at its
// priority, ordered by its age); claiming it creates the incident's `page` task, id
// 'page:<incident id>', claimed by this worker, and marks the late task with that id, so it is
// never a page candidate again and nothing else is asked of it. An empty $page_due (the worker
// does not page, or BLAST_PAGE_WITHIN_MS is 0) turns this off. It is a test on properties of the
// tasks the first selection scans anyway: no lookup, no query and no task for a calm incident.
WITH timestamp() AS now
CALL {
  WITH now
  MATCH (t:Task)
  WHERE t.status IN ['open', 'claimed', 'paused']
    AND ((t.kind IN $kinds AND t.attempts < $max_attempts
          AND (t.status = 'open' OR t.lease_until < now) AND coalesce(t.not_before, 0) <= now
          AND NOT t.kind IN $after_page)
      OR (t.kind IN $page_due AND t.created_at <= now - $page_within_ms AND t.page_task IS NULL))
  WITH t, t.kind IN $page_due AND t.created_at <= now - $page_within_ms
          AND t.page_task IS NULL AS due
  WITH t, due, CASE WHEN due THEN 'page' ELSE t.kind END AS kind
  RETURN t, kind, due ORDER BY coalesce($priority[kind], 99), t.created_at, id(t) LIMIT $limit
  UNION
  WITH now
  MATCH (t:Task)
  WHERE t.status IN ['open', 'claimed', 'paused'] AND t.kind IN $kinds AND t.attempts < $max_attempts
    AND (t.status = 'open' OR t.lease_until < now) AND coalesce(t.not_before, 0) <= now
    AND t.kind IN $after_page
  MATCH (t)-[:FOR]->(i:Incident) WHERE i.notified = true OR i.status = 'merged'
  RETURN t, t.kind AS kind, false AS due
    ORDER BY coalesce($priority[t.kind], 99), t.created_at, id(t) LIMIT $limit
}
WITH t, kind, due, now ORDER BY coalesce($priority[kind], 99), t.created_at, id(t)
WITH collect(t) AS found, collect(kind) AS kinds, collect(due) AS dues, now
WITH [k IN range(0, size(found) - 1) WHERE kinds[k] = kinds[0] | [found[k], dues[k]]] AS same, now
WITH same[0 .. (size(same) + 1) / 2] AS batch, now
UNWIND range(0, size(batch) - 1) AS k
// `due`: a late task whose page task this claim creates; else the task itself is claimed (a
// page task too, taken over once its lease expired)
WITH batch[k][0] AS t, batch[k][1] AS due, $attempt_ids[k] AS attempt_id, now
// FOREACH, not CALL { … }: a MERGE inside a unit subquery ran for the first row only
// (FalkorDB 4.16), so a batch of pages created one page task.
FOREACH (_ IN CASE WHEN due THEN [] ELSE [1] END |
  SET t.status = 'claimed', t.owner = $owner, t.attempt_id = attempt_id, t.epoch = t.epoch + 1,
      t.lease_until = now + $lease_ms, t.attempts = t.attempts + 1,
      t.taken_over = t.status = 'claimed')
WITH t, due, attempt_id, now
OPTIONAL MATCH (t)-[:FOR]->(i:Incident) WHERE due
FOREACH (_ IN CASE WHEN due AND i IS NOT NULL THEN [1] ELSE [] END |
  SET t.page_task = 'page:' + i.id
  MERGE (p:Task {id: 'page:' + i.id})
    ON CREATE SET p += {kind: 'page', incident_id: i.id, status: 'claimed', owner: $owner,
      attempt_id: attempt_id, epoch: 1, attempts: 1, lease_until: now + $lease_ms,
      created_at: now, taken_over: false}
  MERGE (p)-[:FOR]->(i))
WITH t, due, attempt_id
// the page task when one was created (its id: an index lookup; '' for a task with no incident)
OPTIONAL MATCH (p:Task {id: CASE WHEN due THEN coalesce('page:' + t.incident_id, '') ELSE '' END})
WITH CASE WHEN due THEN p ELSE t END AS t, attempt_id
WHERE t.owner = $owner AND t.attempt_id = attempt_id
RETURN t.id AS id, t.kind AS kind, t.epoch AS epoch, t.attempts AS attempts,
       t.incident_id AS incident_id, t.alert_key AS alert_key, t.taken_over AS taken_over,
       t.attempt_id AS attempt_id
