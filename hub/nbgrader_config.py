"""The graded track on the hub: nbgrader's settings for everyone who runs the hub's environment.

`python3 dev.py hub --setup` installs this file as <hub venv>/etc/jupyter/nbgrader_config.py,
where nbgrader looks for it in every student's and the teacher's server (jupyter's config path).
On TLJH copy it to /opt/tljh/user/etc/jupyter/ (hub/README.md, "The graded track on the hub").

- One course per hub, `attention-notebooks`: the Assignments panel of JupyterLab lists the
  assignments the teacher released for it.
- The exchange: the folder through which the teacher releases and collects and the students
  fetch and submit (nbgrader's default exchange). /srv/nbgrader/exchange on a class server,
  mode 1777 as nbgrader documents it (`chmod ugo+rw`) plus the sticky bit, so that no student
  can remove or rename what another created; `AN_NBGRADER_EXCHANGE` (the trial hub, the test)
  puts it elsewhere. `python3 dev.py hub` and tests/test_hub.py make it with the course's folder
  in it already owned by the teacher, so that no student can take the course's name first.

Who sees what is not set here: the teacher's own ~/.jupyter turns on the formgrader
(`sudo python3 dev.py hub --teacher USER`, grading.setup_teacher), everyone else's server has it
off (hubenv.setup). The files themselves
are kept apart by their Unix permissions: the teacher's course folder (solutions, hidden tests,
the gradebook) is in the teacher's home, mode 700.
"""

import os

c = get_config()  # noqa: F821  (nbgrader's config loader defines get_config)

c.CourseDirectory.course_id = "attention-notebooks"
c.Exchange.root = os.environ.get("AN_NBGRADER_EXCHANGE", "/srv/nbgrader/exchange")
