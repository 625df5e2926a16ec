// Create or update people and their team memberships.
UNWIND $people AS p
MERGE (person:Person {name: p.name})
SET person.email = p.email, person.slack_user_id = p.slack_user_id
WITH person, p
MATCH (tm:Team {name: p.team})
MERGE (person)-[:MEMBER_OF]->(tm)
RETURN count(person) AS people
