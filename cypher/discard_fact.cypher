// The person discarded the read-back: the proposed preference is marked discarded (kept, never
// obeyed). Only its author may. Returns nothing when there is no such proposed fact.
MATCH (p:Fact {id: $proposed_id, status: 'proposed'})
WHERE p.person = $person
SET p.status = 'discarded', p.discarded_at = timestamp()
RETURN p.id AS id
