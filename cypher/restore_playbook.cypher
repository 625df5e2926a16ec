// A person brings back a retired playbook (`blast-radius playbook restore ID`): active again,
// recalled again, with what memory earned kept (trust, helped, misled: trust moves only on
// verdicts, so one that retired after it misled twice retires again at its next mislead while
// its trust stays under 0.5). `was` and `reason`: its status and retired reason before. A
// superseded playbook is left as it is (its next version is the one recalled). Null when no
// such playbook. `later`: the latest verdict on the incident it was learned from ({id, verdict,
// actual_cause, by, at}, or null): the CLI warns when it names another cause than
// `component`, the one the playbook is pinned to (the verdict withdrew its lesson).
MATCH (pb:Playbook {id: $id})
OPTIONAL MATCH (pb)-[:PINNED_TO]->(c:Component)
// coalesce: an index lookup of null scans every Incident
OPTIONAL MATCH (:Incident {id: coalesce(pb.learned_from, '')})-[:HAS_VERDICT]->(v:Verdict)
WHERE v.verdict IN ['confirmed', 'rejected']
WITH pb, c, v ORDER BY v.at DESC
WITH pb, c.name AS component,
     head(collect(CASE WHEN v IS NULL THEN null ELSE {id: v.id, verdict: v.verdict,
       actual_cause: v.actual_cause, by: coalesce(v.by_name, v.by), at: v.at} END)) AS later
WITH pb, component, later, pb.status AS was, pb.retired_reason AS reason
SET pb.status = CASE WHEN was = 'retired' THEN 'active' ELSE pb.status END,
    pb.retired_at = CASE WHEN was = 'retired' THEN null ELSE pb.retired_at END,
    pb.retired_reason = CASE WHEN was = 'retired' THEN null ELSE pb.retired_reason END,
    pb.retired_by = CASE WHEN was = 'retired' THEN null ELSE pb.retired_by END
RETURN pb.id AS id, pb.status AS status, was, reason, pb.trust AS trust, pb.misled AS misled,
       component, pb.learned_from AS learned_from, later
