// A fragment, not a query: the properties of a follow-up Task that a completing worker enqueues
// (write_finding, complete_task, for the task of `row`, one of their $tasks), put inside a map
// literal like `_fresh_task`. With row.claim_next it is born claimed by that worker ($owner,
// attempt row.next_attempt_id, epoch 1, a lease of $lease_ms on the database clock), so the
// worker goes on with it without a claim query; otherwise it is the same as `_fresh_task`: open,
// unowned, never claimed.
status: CASE WHEN row.claim_next THEN 'claimed' ELSE 'open' END,
owner: CASE WHEN row.claim_next THEN $owner ELSE '' END,
attempt_id: CASE WHEN row.claim_next THEN row.next_attempt_id ELSE '' END,
epoch: CASE WHEN row.claim_next THEN 1 ELSE 0 END,
attempts: CASE WHEN row.claim_next THEN 1 ELSE 0 END,
lease_until: CASE WHEN row.claim_next THEN timestamp() + $lease_ms ELSE 0 END,
created_at: timestamp(), taken_over: false
