// Move a playbook's trust on a verdict (fenced; idempotent per verdict id). Only a playbook
// that steered the diagnosis is helped (confirmed) or misled (rejected); one whose check failed
// was not applicable and nothing changes. trust = (helped + 1) / (helped + misled + 2); a
// playbook that misled twice with trust under 0.5 retires. A decision moves a playbook's
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
WITH pb, u
SET pb.status = CASE WHEN pb.misled >= 2 AND pb.trust < 0.5 THEN 'retired' ELSE pb.status END
RETURN pb.id AS playbook, u.verdict AS verdict, pb.helped AS helped, pb.misled AS misled,
       pb.trust AS trust, pb.status AS status
