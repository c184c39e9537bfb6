"""The graded track's assignments, one module per notebook (aNN_topic.py, each defining
ASSIGNMENT), and what they share (items.py). scripts/graded_items.py gathers them in course
order."""
