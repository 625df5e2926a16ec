// Whether a change with this id is stored (read only): tells "the id names another change"
// from "unknown component" when record_change matched no row.
MATCH (ch:Change {id: $id})
RETURN ch.id AS id
