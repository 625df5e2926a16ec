// The name of the person whose Slack user id this is (world file `slack_user_id`), or no row.
MATCH (p:Person {slack_user_id: $slack_user_id})
RETURN p.name AS name
LIMIT 1
