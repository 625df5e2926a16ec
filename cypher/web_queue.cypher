// Queue depth: unfinished (open, claimed or paused) and failed tasks by kind and status, with
// `next_at` (ms, UTC) for paused ones: the soonest a worker may take one again (an escalation's
// next level, a page a maintenance window holds, a model cooling down), else null. A paused
// task is work still to come: a queue "empty" of it read as nothing pending.
MATCH (t:Task) WHERE t.status IN ['open', 'claimed', 'paused', 'failed']
RETURN t.kind AS kind, t.status AS status, count(t) AS tasks,
       min(CASE WHEN t.status = 'paused' THEN coalesce(t.resume_at, t.lease_until) END) AS next_at
ORDER BY kind, status
