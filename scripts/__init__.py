"""The project's scripts (regenerate, translate, slides, classroom, bench, the measurements of
notebooks 10, 12 and 13). Each runs as `python3 scripts/<name>.py`; the tests import them as
`scripts.<name>` (the repository root is on sys.path in every test process: the root conftest.py)."""
