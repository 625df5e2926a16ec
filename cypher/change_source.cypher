// Whether any change (deploy, merged pull request) was ever recorded in this graph: a check or
// a tool that reads `recent_changes` says "not checked" without one, not "no change".
// @include _change_source
RETURN change_source
