// A person brings back a retired playbook (`blast-radius playbook restore ID`): active again,
// recalled again, with what memory earned kept (trust, helped, misled: trust moves only on
// verdicts, so one that retired after it misled twice retires again at its next mislead while
// its trust stays under 0.5). `was` and `reason`: its status and retired reason before. A
// superseded playbook is left as it is (its next version is the one recalled). Null when no
// such playbook.
MATCH (pb:Playbook {id: $id})
WITH pb, pb.status AS was, pb.retired_reason AS reason
SET pb.status = CASE WHEN was = 'retired' THEN 'active' ELSE pb.status END,
    pb.retired_at = CASE WHEN was = 'retired' THEN null ELSE pb.retired_at END,
    pb.retired_reason = CASE WHEN was = 'retired' THEN null ELSE pb.retired_reason END,
    pb.retired_by = CASE WHEN was = 'retired' THEN null ELSE pb.retired_by END
RETURN pb.id AS id, pb.status AS status, was, reason, pb.trust AS trust, pb.misled AS misled
