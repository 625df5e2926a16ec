// Create or update people and their team memberships, one row {name, email, slack_user_id,
// team, sources} per membership (a person's details are the same in each of their rows).
// Provenance: MEMBER_OF's `sources` gains every source that said it; drop_members removes a
// source and, with none left, the membership (the person is kept: changes, preferences).
UNWIND $people AS p
MERGE (person:Person {name: p.name})
SET person.email = p.email, person.slack_user_id = p.slack_user_id
WITH person, p
MATCH (tm:Team {name: p.team})
MERGE (person)-[r:MEMBER_OF]->(tm)
SET r.sources = coalesce(r.sources, []) + [s IN p.sources WHERE NOT s IN coalesce(r.sources, [])]
RETURN count(person) AS people
