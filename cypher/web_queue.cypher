// Queue depth: unfinished (open or claimed) and failed tasks by kind and status.
MATCH (t:Task) WHERE t.status IN ['open', 'claimed', 'failed']
RETURN t.kind AS kind, t.status AS status, count(t) AS tasks
ORDER BY kind, status
