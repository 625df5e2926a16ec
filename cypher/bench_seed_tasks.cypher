// bench/claim.py and tests/test_coordination.py only: $n tasks with ids $prefix<k>, kinds
// cycling through $kinds, in $status ('done' = history the claim must not scan), oldest first
// by created_at, each FOR an open incident of its own that nobody has been paged for yet.
UNWIND range(1, $n) AS k
CREATE (:Task {id: $prefix + toString(k), kind: $kinds[k % size($kinds)], status: $status,
  owner: '', attempt_id: '', epoch: 0, attempts: 0, lease_until: 0,
  created_at: timestamp() + k, incident_id: 'bench'})-[:FOR]->(:Incident {
  id: $prefix + 'incident-' + toString(k), status: 'open', notified: false})
RETURN count(k) AS created
