// Whether any change (deploy, merged pull request) was ever recorded in this graph: a change
// source exists. Without one, finding no recent change measured nothing: a check or a tool
// that reads `recent_changes` says "not checked", not "no change". One row, from Change.at's
// index (as respond_context.cypher's `change_source`).
OPTIONAL MATCH (ch:Change) WHERE ch.at >= 0
WITH ch LIMIT 1
RETURN ch IS NOT NULL AS change_source
