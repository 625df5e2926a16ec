// Move a playbook's trust on a verdict (fenced; idempotent per verdict id). Only a playbook
// that steered the diagnosis is helped (confirmed) or misled (rejected); one whose check failed
// was not applicable and nothing changes. trust = (helped + 1) / (helped + misled + 2); a
// playbook that misled twice with trust under 0.5 retires. A decision moves a playbook's
// trust once per outcome. WITH between the SETs: a second SET
// clause would read the values from before the first (FalkorDB 4.16).
MATCH (t:Task {id: $task_id})
WHERE t.status = 'claimed' AND t.owner = $owner AND t.epoch = $epoch AND t.lease_until >= timestamp()
MATCH (d:Decision {id: $decision_id})-[u:USED]->(pb:Playbook {id: $playbook})
WITH pb, u, u.steered AS steered,
     CASE WHEN NOT u.steered THEN 'not_applicable' WHEN $verdict = 'confirmed' THEN 'helped'
          ELSE 'misled' END AS outcome
// once per decision and outcome: a reply naming the cause after a "Wrong cause" click is a
// second rejection of the same decision, not a second time misled
WITH pb, u, steered, coalesce(u.verdict_id, '') <> $verdict_id AND coalesce(u.verdict, '') <> outcome AS fresh
SET u.verdict = CASE WHEN NOT fresh THEN u.verdict WHEN NOT steered THEN 'not_applicable'
                     WHEN $verdict = 'confirmed' THEN 'helped' ELSE 'misled' END,
    u.verdict_id = $verdict_id,
    pb.helped = pb.helped + CASE WHEN fresh AND steered AND $verdict = 'confirmed' THEN 1 ELSE 0 END,
    pb.misled = pb.misled + CASE WHEN fresh AND steered AND $verdict = 'rejected' THEN 1 ELSE 0 END
WITH pb, u
SET pb.trust = toFloat(pb.helped + 1) / (pb.helped + pb.misled + 2)
WITH pb, u
SET pb.status = CASE WHEN pb.misled >= 2 AND pb.trust < 0.5 THEN 'retired' ELSE pb.status END
RETURN pb.id AS playbook, u.verdict AS verdict, pb.helped AS helped, pb.misled AS misled,
       pb.trust AS trust, pb.status AS status
