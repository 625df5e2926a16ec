// A fragment, not a query: a CALL subquery over an incident `i` giving `held`, the maintenance
// windows that held its current episode's message (the page, or after a reopen the reopen's
// notice) and have ended: IN_MAINTENANCE edges stamped `held_at` (maintenance_covering) since
// the latest reopen, each `{reason, by, ended_by, held_at, ends_at}` (ms). A snooze's edge,
// or one a merge carried, has no `held_at`: it held no message. [] for an incident no window
// ever covered, without a traversal (`maintenance_until` is null).
CALL {
  WITH i
  WITH i WHERE i.maintenance_until IS NOT NULL
  MATCH (i)-[r:IN_MAINTENANCE]->(m:Maintenance)
  WHERE r.held_at >= coalesce(i.reopened_at, 0) AND m.ends_at <= timestamp()
  RETURN collect({reason: m.reason, by: m.by, ended_by: m.ended_by, held_at: r.held_at,
                  ends_at: m.ends_at}) AS held
}
