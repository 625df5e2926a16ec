// What the world part of a tenant graph holds now: components, dependency edges between them,
// teams, people and on-call shifts (printed after an import; a re-import must not change it).
MATCH (c:Component)
WITH count(c) AS components
OPTIONAL MATCH (:Component)-[e:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON]->(:Component)
WITH components, count(e) AS edges
OPTIONAL MATCH (t:Team)
WITH components, edges, count(t) AS teams
OPTIONAL MATCH (p:Person)
WITH components, edges, teams, count(p) AS people
OPTIONAL MATCH (s:OnCallShift)
RETURN components, edges, teams, people, count(s) AS shifts
