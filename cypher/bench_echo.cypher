// Tests only: a parameter as the server read it (tests/test_params.py: what `params_header`
// writes reads back as the value sent).
RETURN $value AS value
