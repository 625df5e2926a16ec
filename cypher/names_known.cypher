// Which of $components and $teams the tenant's world knows: a maintenance window over an
// unknown name would hold nothing, and a playbook check naming one could never hold (the API
// says so with a 422).
CALL {
  UNWIND $components AS name
  OPTIONAL MATCH (c:Component {name: name})
  RETURN collect(c.name) AS components
}
CALL {
  UNWIND $teams AS name
  OPTIONAL MATCH (tm:Team {name: name})
  RETURN collect(tm.name) AS teams
}
RETURN components, teams
