// Create or update teams (their ownership: import_owners; members: import_people). A value a
// source does not give (null) keeps the stored one: `is_default` is only set by a source that
// names a default team, `oncall_json` (the rotation or calendar on-call shifts are expanded
// from) only by one that gives on-call; `escalation_policy_json` (levels and repeat, ms) is ''
// from a world file without a policy (cleared), null from other sources (kept). Provenance:
// `sources` gains every source that said the team (`t.sources`); drop_teams removes a source
// and, with none left, the team.
// `approvers`: people (by name) who may approve a remediation of the team's components besides
// its members.
// One row per team: its escalation policy before (`policy_before`, null for a new team) and
// now (`policy`), so the import can say what changed.
UNWIND $teams AS t
MERGE (tm:Team {name: t.name})
WITH t, tm, tm.escalation_policy_json AS policy_before
SET tm.slack_channel = coalesce(t.slack_channel, tm.slack_channel),
    tm.escalation = coalesce(t.escalation, tm.escalation),
    tm.is_default = coalesce(t.is_default, tm.is_default, false),
    tm.oncall_json = coalesce(t.oncall_json, tm.oncall_json),
    tm.escalation_policy_json = coalesce(t.escalation_policy_json, tm.escalation_policy_json),
    tm.approvers = coalesce(t.approvers, tm.approvers),
    tm.sources = coalesce(tm.sources, []) + [s IN t.sources WHERE NOT s IN coalesce(tm.sources, [])]
RETURN tm.name AS team, policy_before, tm.escalation_policy_json AS policy
