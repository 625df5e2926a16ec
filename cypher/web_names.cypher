// The tenant's component and team names (at most $limit each), for the maintenance form's
// suggestions.
CALL {
  MATCH (c:Component)
  RETURN collect(c.name)[..$limit] AS components
}
CALL {
  MATCH (tm:Team)
  RETURN collect(tm.name)[..$limit] AS teams
}
RETURN components, teams
