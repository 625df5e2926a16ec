// Finish tasks (each fenced on its own task) and, in the same query, enqueue each one's
// follow-up task if one is named. $tasks: one row per task, {task_id, epoch, outcome,
// next_kind, next_id, mark_notified, root_cause, shows, reached, claim_next, next_attempt_id}:
// a task whose owner ($owner), epoch or lease no longer holds gets no row back and nothing of
// its row is written, the others go on (one query for a batch's completions,
// TaskRun.complete).
// row.mark_notified records that the incident's people were told, and which root cause they
// were told, and row.shows what else their page showed (`agents.respond.messages.page_shows`:
// a re-investigation edits the page when that changed). row.reached (null: nothing paged by
// this task) says whether the page it sent reached someone: a person on call or a channel;
// `page_reached` stays true once one did (false: every page went to nobody, "nobody paged").
// The follow-up id is deterministic, so a repeated completion cannot enqueue it twice.
// With row.claim_next the follow-up is claimed for this worker (attempt row.next_attempt_id,
// a lease of $lease_ms) as it is created, so the same worker goes on with it without a claim
// query; `next_claimed` says whether it did (not when the follow-up existed).
// `coalesce(row.next_id, '')`: an index lookup of null scans every Task.
// First the outcomes of the attempts' earlier outside calls ($records, `_records_call`).
// @include _records_call
WITH timestamp() AS now
UNWIND $tasks AS row
MATCH (t:Task {id: row.task_id})-[:FOR]->(i:Incident)
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = row.epoch AND t.lease_until >= now
SET t.status = 'done', t.finished_at = now, t.outcome = row.outcome,
    i.notified = CASE WHEN row.mark_notified THEN true ELSE i.notified END,
    i.notified_root_cause = CASE WHEN row.mark_notified THEN row.root_cause
                                 ELSE i.notified_root_cause END,
    i.notified_shows = CASE WHEN row.mark_notified THEN row.shows ELSE i.notified_shows END,
    i.page_reached = CASE WHEN row.reached IS NULL THEN i.page_reached
                          ELSE coalesce(i.page_reached, false) OR row.reached END
FOREACH (_ IN CASE WHEN row.next_kind IS NULL THEN [] ELSE [1] END |
  MERGE (n:Task {id: coalesce(row.next_id, '')})
    ON CREATE SET n += {kind: row.next_kind, incident_id: i.id,
// @include _chained_task
}
  MERGE (n)-[:FOR]->(i))
WITH t, i, row
OPTIONAL MATCH (n:Task {id: coalesce(row.next_id, '')})
WITH t, i, n, n IS NOT NULL AND n.owner = $owner AND n.attempt_id = row.next_attempt_id
     AND n.epoch = 1 AS next_claimed
RETURN t.id AS task_id, next_claimed, n.kind AS next_kind, i.id AS incident_id
