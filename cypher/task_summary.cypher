// Tasks by status with their claims (sum of epochs: one per claim, so claims - tasks = re-claims
// after a lost lease, a release or a shutdown). Used by bench/chaos.py.
MATCH (t:Task)
RETURN t.status AS status, count(t) AS tasks, sum(t.epoch) AS claims
ORDER BY status
