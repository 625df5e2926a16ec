// Move a playbook's trust on a verdict (fenced; idempotent per verdict id). Only a playbook
// that steered the diagnosis is helped (confirmed) or misled (rejected); one whose check failed
// was not applicable and nothing changes. trust = (helped + 1) / (helped + misled + 2); a
// playbook that misled twice with trust under 0.5 retires, saying why: `retired_reason` names
// the incidents it misled on and who rejected them ("misled twice, trust under 0.5: rejected
// on inc-a by Pat Platform, inc-b by Pat Platform"; a reason already there stays). A decision moves a playbook's
// trust once, as its latest verdict says. WITH between the SETs: a second SET
// clause would read the values from before the first (FalkorDB 4.16).
MATCH (t:Task {id: $task_id})
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = $epoch AND t.lease_until >= timestamp()
MATCH (d:Decision {id: $decision_id})-[u:USED]->(pb:Playbook {id: $playbook})
WITH pb, u, u.steered AS steered,
     CASE WHEN NOT u.steered THEN 'not_applicable' WHEN $verdict = 'confirmed' THEN 'helped'
          ELSE 'misled' END AS outcome
// once per decision and outcome: a reply naming the cause after a "Wrong cause" click is a
// second rejection of the same decision, not a second time misled. A verdict that changes
// the outcome (confirmed after rejected, or the other way) replaces the earlier one: its
// count moves back, so each decision counts once, as its latest verdict says.
WITH pb, u, steered, outcome, coalesce(u.verdict, '') AS before
WITH pb, u, steered, outcome, before,
     coalesce(u.verdict_id, '') <> $verdict_id AND before <> outcome AS fresh
SET u.verdict = CASE WHEN fresh THEN outcome ELSE u.verdict END,
    u.verdict_id = $verdict_id,
    pb.helped = pb.helped + CASE WHEN NOT fresh OR NOT steered THEN 0
                                 WHEN outcome = 'helped' THEN 1
                                 WHEN before = 'helped' THEN -1 ELSE 0 END,
    pb.misled = pb.misled + CASE WHEN NOT fresh OR NOT steered THEN 0
                                 WHEN outcome = 'misled' THEN 1
                                 WHEN before = 'misled' THEN -1 ELSE 0 END
WITH pb, u
SET pb.trust = toFloat(pb.helped + 1) / (pb.helped + pb.misled + 2)
WITH pb, u, pb.misled >= 2 AND pb.trust < 0.5 AND pb.status <> 'retired' AS retiring
// the decisions it misled on (this one's verdict is set above), oldest incident first
OPTIONAL MATCH (i:Incident)-[:HAS_DECISION]->(:Decision)-[m:USED]->(pb),
               (i)-[:HAS_VERDICT]->(v:Verdict)
WHERE retiring AND m.verdict = 'misled' AND v.id = m.verdict_id
// who: their name as the world file gives it (a Slack verdict stores their Slack id)
OPTIONAL MATCH (who:Person) WHERE v.by_name IS NULL AND who.slack_user_id = v.by
WITH pb, u, retiring, i, v, head(collect(who.name)) AS who ORDER BY i.opened_at
WITH pb, u, retiring,
     collect(DISTINCT i.id + coalesce(' by ' + coalesce(v.by_name, who, v.by), '')) AS misled_on
SET pb.status = CASE WHEN retiring THEN 'retired' ELSE pb.status END,
    pb.retired_at = CASE WHEN retiring THEN coalesce(pb.retired_at, timestamp())
                         ELSE pb.retired_at END,
    pb.retired_reason = CASE WHEN retiring THEN coalesce(pb.retired_reason,
        'misled ' + CASE pb.misled WHEN 2 THEN 'twice' ELSE toString(pb.misled) + ' times' END
        + ', trust under 0.5: rejected on '
        + reduce(s = '', x IN misled_on | s + CASE WHEN s = '' THEN '' ELSE ', ' END + x))
      ELSE pb.retired_reason END
RETURN pb.id AS playbook, u.verdict AS verdict, pb.helped AS helped, pb.misled AS misled,
       pb.trust AS trust, pb.status AS status, pb.retired_reason AS retired_reason
