// tests/test_params.py only: a parameter as the server read it (what `params_header` writes
// reads back as the value sent).
RETURN $value AS value
