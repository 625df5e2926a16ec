// Every playbook with where it is pinned, its trust and status (newest first), and its
// remediation with the trust its verified runs earned (remediation_trust, null before any).
// Who made it: `author` for one a person wrote (the API, the CLI or a world file), else the
// incident it was learned from (`learned_from`, opened at `learned_at`), who gave the verdict
// (`confirmed_by`) and whether it confirmed or corrected the finding (`lesson`), and the cause
// the corrected finding had named (`corrected_from`); null if unknown. `lesson_text`: what
// happened, in the words of the verdict that taught it (the first it was learned from, whose
// author is `confirmed_by`: a later verdict's words are another person's), null when it gave
// none.
MATCH (pb:Playbook)-[:PINNED_TO]->(c:Component)
OPTIONAL MATCH (pb)-[:SUPERSEDES]->(old:Playbook)
OPTIONAL MATCH (pb)-[:LEARNED_FROM]->(v:Verdict)
WITH pb, c, old, v
ORDER BY v.at, coalesce(v.seq, 0)
WITH pb, c, old, collect(v)[0] AS taught
WITH pb, c, old,
     CASE WHEN taught.source <> 'button' AND taught.text <> '' THEN taught.text END AS lesson_text
RETURN pb.id AS id, pb.title AS title, pb.failure_kind AS failure_kind, c.name AS component,
       pb.checks_json AS checks_json, pb.helped AS helped, pb.misled AS misled,
       pb.trust AS trust, pb.status AS status, old.id AS supersedes, pb.created_at AS created_at,
       pb.retired_reason AS retired_reason, pb.remediation_json AS remediation_json,
       pb.remediation_verified AS remediation_verified,
       pb.remediation_failed AS remediation_failed, pb.remediation_trust AS remediation_trust,
       pb.author AS author, pb.learned_from AS learned_from, pb.learned_at AS learned_at,
       pb.confirmed_by AS confirmed_by, pb.lesson AS lesson, pb.corrected_from AS corrected_from,
       lesson_text
ORDER BY created_at DESC, id
