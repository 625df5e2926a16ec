// A fragment, not a query: the properties every new Task starts with, put inside a map literal
// (`{id: …, kind: …,` then `// @include _fresh_task` on its own line, then `}`) by a query that
// creates a task. Open, unowned, never claimed (epoch and attempts 0, no lease), created now
// (database clock). The claim protocol (claim_task.cypher) relies on every one of these.
status: 'open', owner: '', attempt_id: '', epoch: 0, attempts: 0, lease_until: 0,
created_at: timestamp()
