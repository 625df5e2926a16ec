// Whether a component is a traffic source (`client: true` in the world): a failure there is a
// surge, the failure kind the learner names a playbook on it by (learner.py, `_learn`).
MATCH (c:Component {name: $component})
RETURN coalesce(c.client, false) AS client
