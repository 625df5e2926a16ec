"""The responder: who is told (routing, preferences) and what they are told (typed notices)."""
