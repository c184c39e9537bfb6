"""The course's companion code: what the notebooks use besides the maths in attention_core.

- ``course.live``: LiveFigure and with_controls(), the machinery behind every slider;
- ``course.figures``: the course's figure style (use_course_style) and shared drawing helpers;
- ``course.checks``: Verdict, check_value, the one registry of named mistakes (MISTAKES) and the
  hints and worked solutions of every self-check question (QUESTIONS, hint(), solution());
- ``course.nbNN_topic``: notebook NN's own figures, live figure and self-checks, next to
  ``notebooks/NN_topic.ipynb`` and tested in ``tests/test_nbNN_topic.py``.

Importing any of them changes no global state.
"""
