CALL {
  // Whether any change (deploy, merged pull request) was ever recorded: a change source
  // exists. Without one, finding no recent change measured nothing ("not checked", not "no
  // change"). One row, from Change.at's index.
  OPTIONAL MATCH (ch:Change) WHERE ch.at >= 0
  WITH ch LIMIT 1
  RETURN ch IS NOT NULL AS change_source
}
