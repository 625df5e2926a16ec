// One fact (a stated preference), for the read-back message.
MATCH (f:Fact {id: $id})
RETURN f.id AS id, f.status AS status, f.person AS person, f.person_name AS person_name,
       f.failure_kind AS failure_kind, f.no_page AS no_page, f.ticket AS ticket,
       f.detail AS detail, f.text AS text, f.stated_at AS stated_at
