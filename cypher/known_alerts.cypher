// Which of $keys are stored alerts already (a resend, a resolve, a repeat): triage writes those
// in batches (`triage_known`) and correlates only the others.
UNWIND $keys AS k
MATCH (a:Alert {key: k})
RETURN a.key AS key
