// The outcome of Attempt $n of a remediation (not fenced: the outside call happened, and the
// graph must say so): 'dispatched', 'reconciled' (an earlier try had done it), 'recorded'
// (its outcome was already on record) or 'error: …', with the outside system's reference.
// $status: the remediation's new status ('running' while it awaits verification, 'failed'
// when a retry cannot help). `ran_at` is set once, by the first try that got it done.
MATCH (r:Remediation {id: $remediation_id})-[:HAS_ATTEMPT]->(a:Attempt {n: $n})
SET a.outcome = $outcome, a.external_ref = $external_ref, a.finished_at = timestamp(),
    r.status = $status, r.external_ref = coalesce($external_ref, r.external_ref),
    r.ran_at = CASE WHEN $external_ref IS NULL THEN r.ran_at ELSE coalesce(r.ran_at, timestamp()) END
RETURN a.n AS n, r.ran_at AS ran_at
