// Every use of every playbook, oldest first: the trust it had when a decision used it, what
// the verdict did to that use (helped, misled, not_applicable, or null before one), and the
// incident's latest verdict on its cause ([verdict, actual cause, who], or null): a verdict
// given before a re-investigation moves the use it followed, not the later one (its trust
// history, `gateway.web.overview.trust_words`).
MATCH (i:Incident)-[:HAS_DECISION]->(d:Decision)-[u:USED]->(pb:Playbook)
OPTIONAL MATCH (i)-[:HAS_VERDICT]->(v:Verdict)
WHERE v.verdict IN ['confirmed', 'rejected']
// who: their name as the world file gives it (a Slack verdict stores their Slack id)
OPTIONAL MATCH (who:Person) WHERE v.by_name IS NULL AND who.slack_user_id = v.by
WITH pb, d, u, v, head(collect(who.name)) AS who ORDER BY v.at, coalesce(v.seq, 0)
WITH pb, d, u,
     collect(CASE WHEN v IS NULL THEN null
                  ELSE [v.verdict, v.actual_cause, coalesce(v.by_name, who, v.by)] END) AS said
RETURN pb.id AS playbook, d.incident_id AS incident_id, d.at AS at,
       u.trust_at_use AS trust_at_use, u.steered AS steered, u.verdict AS verdict,
       CASE WHEN size(said) = 0 THEN null ELSE said[size(said) - 1] END AS incident_verdict
ORDER BY at, incident_id
