// Open a maintenance window (a quiet window) over $components and/or $teams, from now (database
// clock) until $ends_at (ms) or for $minutes; $id is new (a repeat with the same id changes
// nothing). No row when the window would end now or earlier. Incidents it covers are recorded
// but not paged until it ends (agents/respond/maintenance.py). Tasks held by a window re-check
// when claimed, so a new window needs no other write.
WITH timestamp() AS now
WITH now, coalesce($ends_at, now + coalesce($minutes, 0) * 60000) AS ends
WHERE ends > now
MERGE (m:Maintenance {id: $id})
  ON CREATE SET m.components = $components, m.teams = $teams, m.starts_at = now,
    m.ends_at = ends, m.reason = $reason, m.by = $by
RETURN m.id AS id, m.components AS components, m.teams AS teams, m.starts_at AS starts_at,
       m.ends_at AS ends_at, m.reason AS reason, m.by AS by
