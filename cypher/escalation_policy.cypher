// A team's escalation policy (JSON written by the world import, '' or null: none) and its
// paging channel, by team name (an index lookup; a null name is coalesced to '').
OPTIONAL MATCH (tm:Team {name: coalesce($team, '')})
RETURN tm.name AS team, tm.escalation_policy_json AS policy, tm.slack_channel AS channel
