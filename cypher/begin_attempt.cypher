// Start one try of an approved remediation (fenced by the `remediate` task's lease): the
// remediation is 'running' and gets Attempt n (1, 2, …) with outcome 'started', written before
// the outside call, so a worker killed during the call still leaves its try on record.
MATCH (t:Task {id: $task_id})
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = $epoch AND t.lease_until >= timestamp()
MATCH (r:Remediation {id: $remediation_id})
WHERE r.status IN ['approved', 'running']
OPTIONAL MATCH (r)-[:HAS_ATTEMPT]->(old:Attempt)
WITH r, count(old) AS tries
SET r.status = 'running'
CREATE (r)-[:HAS_ATTEMPT]->(a:Attempt {n: tries + 1, at: timestamp(), outcome: 'started',
  task_attempt: $task_attempt})
RETURN a.n AS n
